// npm run profile: where a spec's states come from. Searches the spec breadth-first on this
// thread and prints, per state component (each producer, the coordinator, each leader, each
// consumer, each channel, the ghost history, the fault budgets), its distinct values and how much
// it multiplies the count of distinct states.
//
//   npm run profile -- <spec.json> [--variant NAME] [--max-states N] [--fields] [--json]
//
// --fields splits each actor into its fields (`producer P0.0.epoch`).
import { parseArgs } from 'node:util';
import { profileModel } from '../engine/profile.ts';
import { InputError } from '../engine/input.ts';
import { modelOf } from '../../specs/build.ts';
import { loadSpecFile, parseSpec } from '../../specs/load.ts';

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      variant: { type: 'string' },
      'max-states': { type: 'string' },
      fields: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) throw new InputError('command line', 'spec', 'one spec file');
  const file = positionals[0]!;
  let spec = loadSpecFile(file);
  if (values.variant !== undefined) {
    const known = spec.entry.variants?.map((v) => v.name) ?? [];
    if (!known.includes(values.variant))
      throw new InputError(
        'command line',
        '--variant',
        `one of ${known.join(', ') || '(none)'}`,
        values.variant,
      );
    spec = parseSpec(file, spec.entry.withVariant!(spec.raw, values.variant), '');
  }
  const maxStates =
    values['max-states'] === undefined ? spec.defaults.maxStates : Number(values['max-states']);
  if (maxStates !== undefined && !(Number.isInteger(maxStates) && maxStates > 0))
    throw new InputError('command line', '--max-states', 'a positive integer', values['max-states']);
  const started = performance.now();
  const profile = profileModel(
    modelOf(spec),
    {
      deadlockAllowed: spec.deadlockAllowed,
      ...(maxStates === undefined ? {} : { maxStates }),
      maxDepth: spec.defaults.maxDepth,
    },
    values.fields,
  );
  const seconds = (performance.now() - started) / 1000;
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ spec: file, variant: values.variant, seconds, ...profile })}\n`);
    return 0;
  }
  const bounded = profile.status === 'ok' ? '' : ` (search ${profile.status}: a bound stopped it)`;
  process.stdout.write(
    `${file}${values.variant === undefined ? '' : ` under ${values.variant}`}: ` +
      `${profile.states.toLocaleString('en-US')} distinct states${bounded}, ${seconds.toFixed(1)} s\n\n` +
      '| component | distinct values | multiplies the states by |\n|---|---:|---:|\n' +
      profile.components.map((c) => `| ${c.name} | ${c.values} | ${c.multiplier.toFixed(2)} |`).join('\n') +
      '\n',
  );
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  if (!(
    e instanceof InputError ||
    (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))
  ))
    throw e;
  process.stderr.write(`txcheck profile: ${e.message}\n`);
  process.exitCode = 2;
}

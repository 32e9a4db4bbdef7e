// Worker threads start here: Node 20 does not load TypeScript in workers by itself, so this
// plain module lets tsx hook the worker, then imports the TypeScript entry given in argv.
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);

// The explorer's model thread (see answers.ts): builds the model of the spec or trace it is given
// and answers the server's API calls one at a time.
import { workerData } from 'node:worker_threads';
import { answerRequests } from '../engine/parallel/handle.ts';
import { type ApiRequest, answer } from './answers.ts';
import { type ExplorerSource, explorerSource } from './source.ts';

const { file, outDir } = workerData as { file: string; outDir: string };
let source: ExplorerSource | undefined;
let failure: unknown;
try {
  source = explorerSource(file, outDir);
} catch (e) {
  // Bad input goes back with the first request, as one line naming the file.
  failure = e;
}

answerRequests((request: ApiRequest) => {
  if (source === undefined) throw failure;
  return { message: answer(source, request) };
});

/**
 * The worker thread of DecodePool: decodes one upload body at a time (sourcemap-decode.ts) and
 * hands the compressed maps back without copying them.
 */
import { parentPort } from 'node:worker_threads';
import { decodeUpload } from './sourcemap-decode.js';

parentPort?.on('message', (message: { id: number; body: Uint8Array; maxFiles: number }) => {
  try {
    const result = decodeUpload(message.body, message.maxFiles);
    const transfer = result.ok && result.decoded ? result.decoded.flatMap((file) => (file.map.ok ? [file.map.compressed.buffer as ArrayBuffer] : [])) : [];
    parentPort!.postMessage({ id: message.id, result }, transfer);
  } catch (err) {
    parentPort!.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
});

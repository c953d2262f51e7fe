/** Network helpers shared by the tests and the benchmarks. */
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (bound, read, released). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

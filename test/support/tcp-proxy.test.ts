/**
 * The fault suite's TCP proxy itself, in front of an echo server: open, stalled (bytes held, then
 * delivered on restore, nothing lost), cut (open connections reset, new ones refused by a reset),
 * restored.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { TcpProxy } from './tcp-proxy';

let echo: Server;
let proxy: TcpProxy;
beforeAll(async () => {
  echo = createServer((s) => s.on('error', () => undefined).pipe(s)); // a cut resets the echo side too
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  proxy = await TcpProxy.start({ host: '127.0.0.1', port: (echo.address() as AddressInfo).port });
});
afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => echo.close(resolve));
});

/** A client through the proxy: what it received so far, and how it ended. */
async function client(): Promise<{ socket: Socket; received: () => string; ended: Promise<string> }> {
  const socket = connect(proxy.port, '127.0.0.1');
  let received = '';
  socket.on('data', (c) => (received += c));
  const ended = new Promise<string>((resolve) => {
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.on('close', () => resolve('closed'));
  });
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, received: () => received, ended };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

test('open, stalled, restored, cut, restored', async () => {
  const a = await client();
  a.socket.write('one');
  await until(() => a.received() === 'one');
  expect(a.received()).toBe('one');

  proxy.stall();
  a.socket.write('two');
  await new Promise((r) => setTimeout(r, 300));
  expect(a.received()).toBe('one'); // held, not lost
  proxy.restore();
  await until(() => a.received() === 'onetwo');
  expect(a.received()).toBe('onetwo');

  proxy.cut();
  expect(await a.ended).toBe('ECONNRESET');
  const refused = connect(proxy.port, '127.0.0.1');
  const outcome = await new Promise<string>((resolve) => {
    refused.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    refused.on('close', () => resolve('closed'));
  });
  expect(outcome).toBe('ECONNRESET');

  proxy.restore();
  const b = await client();
  b.socket.write('three');
  await until(() => b.received() === 'three');
  expect(b.received()).toBe('three');
  b.socket.destroy();
});

import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy the test controls, standing between the service and PostgreSQL so that a test can cut
 * the database off (and bring it back) without touching the shared server.
 */
export interface TcpProxy {
  port: number;
  /** Destroys every open connection and refuses (resets) new ones until `restore`. */
  cut(): void;
  /**
   * A black hole: every connection, open or new, stays open but nothing goes through in either
   * direction (what arrives is dropped) until `restore`, like a network that silently loses packets.
   */
  pause(): void;
  /** Forwards new connections again. Connections held during a pause lost bytes, so they are reset. */
  restore(): void;
  close(): Promise<void>;
}

type Mode = 'forwarding' | 'cut' | 'paused';

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  /** The client ends of forwarding connections, with their upstream ends. */
  const pairs = new Map<Socket, Socket>();
  /** Sockets taken or accepted during a pause: they read and drop until `restore` resets them. */
  const held = new Set<Socket>();
  let mode: Mode = 'forwarding';

  const track = (socket: Socket, onClose: () => void) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      held.delete(socket);
      onClose();
    });
  };

  const hold = (socket: Socket) => {
    held.add(socket);
    socket.resume(); // flowing without a reader: whatever arrives is dropped
  };

  const server: Server = createServer((client) => {
    if (mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'paused') {
      track(client, () => undefined);
      client.on('error', () => client.destroy());
      hold(client);
      return;
    }
    const upstream = connect(target.port, target.host);
    pairs.set(client, upstream);
    for (const socket of [client, upstream]) {
      track(socket, () => pairs.delete(client));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    cut() {
      mode = 'cut';
      for (const socket of sockets) socket.resetAndDestroy();
    },
    pause() {
      mode = 'paused';
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        hold(client);
        hold(upstream);
      }
      pairs.clear();
    },
    restore() {
      mode = 'forwarding';
      for (const socket of held) socket.resetAndDestroy();
      held.clear();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

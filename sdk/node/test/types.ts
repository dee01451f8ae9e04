// Compiled by `npm test` (tsc --noEmit): the declarations describe the SDK as used.
import { Content, Stop, ToolError, image, run, serve, text, tool } from '..';

interface Greeting {
  name: string;
}

const greet = tool<Greeting>(
  'greet',
  'Greets someone by name.',
  async (input, call) => {
    call.emit(`greeting ${input.name}`);
    if (call.cancelled || call.signal.aborted) throw new ToolError('stopped');
    const code: number = await run(call, 'echo', [input.name], { cwd: '/' });
    return code === 0 ? `Hello, ${input.name}!` : Stop('failed');
  },
  {
    schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    timeoutMs: 5000,
    readOnly: true,
    limits: { memoryBytes: 1 << 28, cpuTimeMs: 10_000 },
  },
);

const picture = tool('picture', 'A picture.', () => Content.of(text('dot'), image('image/png', new Uint8Array([1]))));

if (process.env.NEVER) serve(greet, picture);

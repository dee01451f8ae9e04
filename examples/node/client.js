// A Node.js client of agentcore's AgentService (@grpc/grpc-js + @grpc/proto-loader).
// It creates an agent, sends one task, prints the events as they stream in and
// answers the permission request for every tool call (allowing it).
//
//   node client.js [address] [task]
//
// Environment: AGENTCORE_ADDR (default 127.0.0.1:50051), AGENTCORE_AUTH_TOKEN
// (when the server wants a bearer token), AGENTCORE_SYSTEM (the agent's system prompt).
'use strict'

const path = require('node:path')
const grpc = require('@grpc/grpc-js')
const protoLoader = require('@grpc/proto-loader')

const PROTO_ROOT = path.join(__dirname, '..', '..', 'proto')

function loadService() {
  const definition = protoLoader.loadSync('agentcore/v1/agent_service.proto', {
    includeDirs: [PROTO_ROOT],
    keepCase: false, // fields in camelCase: agentId, permissionMode…
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true, // each oneof's name says which field is set: event.kind === 'permissionRequest'
  })
  return grpc.loadPackageDefinition(definition).agentcore.v1.AgentService
}

function call(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, (err, response) => (err ? reject(err) : resolve(response)))
  })
}

// send runs one task and resolves with the result event, answering every
// permission request with allow.
function send(client, metadata, agentId, task) {
  return new Promise((resolve, reject) => {
    const stream = client.send(metadata)
    let result = null
    stream.on('data', ({ event }) => {
      switch (event.kind) {
        case 'runStarted':
          console.log(`[run started] ${event.runId}`)
          break
        case 'modelRequest':
          console.log(`[step ${event.modelRequest.step}] asking the model`)
          break
        case 'modelDelta':
          if (event.modelDelta.text) process.stdout.write(event.modelDelta.text)
          break
        case 'modelResponse':
          console.log(`\n  model finished: ${event.modelResponse.finishReason}`)
          break
        case 'permissionRequest': {
          const p = event.permissionRequest
          console.log(`  permission asked: ${p.toolName} ${p.arguments} -> allow`)
          stream.write({ permission: { toolCallId: p.toolCallId, allow: true } })
          break
        }
        case 'toolCall':
          console.log(`  -> ${event.toolCall.toolName} ${event.toolCall.arguments}`)
          break
        case 'toolResult': {
          const out = event.toolResult.output
          console.log(`  <- ${event.toolResult.toolName} = ${out.text || out.json}${event.toolResult.error ? ' (error)' : ''}`)
          break
        }
        case 'result':
          result = event.result
          break
      }
    })
    stream.on('error', reject)
    stream.on('end', () => (result ? resolve(result) : reject(new Error('the stream ended without a result'))))
    stream.write({
      start: {
        agentId,
        input: [{ text: task }],
        permissionMode: 'PERMISSION_MODE_ASK_ALL',
      },
    })
  })
}

async function main() {
  const address = process.argv[2] || process.env.AGENTCORE_ADDR || '127.0.0.1:50051'
  const task = process.argv[3] || 'Say hello to Ming.'
  const AgentService = loadService()
  const client = new AgentService(address, grpc.credentials.createInsecure())
  const metadata = new grpc.Metadata()
  if (process.env.AGENTCORE_AUTH_TOKEN) metadata.set('authorization', `Bearer ${process.env.AGENTCORE_AUTH_TOKEN}`)

  const config = {}
  if (process.env.AGENTCORE_SYSTEM) config.system = process.env.AGENTCORE_SYSTEM
  const { agent } = await call(client, 'createAgent', { agent: { config } }, metadata)
  console.log(`agent ${agent.id}`)
  try {
    const result = await send(client, metadata, agent.id, task)
    console.log(`result: reason=${result.reason} steps=${result.steps} text=${JSON.stringify(result.text)}`)
  } finally {
    await call(client, 'deleteAgent', { agentId: agent.id }, metadata)
    client.close()
  }
}

main().catch((err) => {
  // A gRPC error carries the code and, in google.rpc.ErrorInfo, the model error's kind.
  console.error(`error: ${err.code !== undefined ? grpc.status[err.code] + ': ' : ''}${err.details || err.message}`)
  process.exit(1)
})

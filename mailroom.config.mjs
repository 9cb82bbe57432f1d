// The demo config `npm start` runs: one Standard Webhooks source, `demo`, whose events
// fan out to a task that logs them. In your own project write
//   import { defineConfig } from 'mailroom';  export default defineConfig({ ... });
// a plain object, as here, works too. Secrets come from the environment, never the file.

export default {
  db: process.env.MAILROOM_DB ?? 'sqlite:./data/mailroom.db',
  server: { host: '127.0.0.1', port: 8080, bodyLimitBytes: 1_048_576 },
  sources: {
    demo: {
      provider: 'standard',
      // DEMO ONLY: a well-known secret so `send-test` works out of the box. Anyone can sign
      // with it; set MAILROOM_DEMO_SECRET (whsec_ + base64) before exposing this server.
      secrets: [process.env.MAILROOM_DEMO_SECRET ?? 'whsec_ZGVtby1zZWNyZXQtbm90LWZvci1wcm9kdWN0aW9u'],
      tasks: ['demo_log'],
    },
  },
  tasks: {
    demo_log: { module: './examples/demo-task.mjs' },
  },
};

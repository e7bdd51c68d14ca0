// Loaded before every test file (bunfig.toml's [test] preload).
//
// Every `serve` a test starts with this environment (startServerProcess and cli() pass
// process.env on) opens no admin listener: each would take its default port, 8081, and
// two servers at once (in one test, in test runs side by side, or beside a server someone
// runs on this machine) would refuse each other. Bun.spawn without an `env` option passes
// the environment the process started with, not this change: such a spawn of `serve` says
// --admin-port off itself. Tests of the admin listener ask for it with --admin-port 0,
// which wins over the variable.
process.env.IPLOOKUP_ADMIN_PORT = "off";

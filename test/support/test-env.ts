// Loaded before every test file (bunfig.toml's [test] preload).
//
// Every `serve` a test starts inherits this environment: without it, each would open the
// admin listener on its default port, 8081, and two servers at once (in one test, or in
// test runs side by side on one machine) would refuse each other. Tests of the admin
// listener ask for it with --admin-port 0, which wins over the variable.
process.env.IPLOOKUP_ADMIN_PORT = "off";

// `import Keygate` brings the whole public API: the engine's types (access controls,
// contexts, decisions, statuses, audit records) and the stores.
@_exported public import KeygatePolicy
@_exported public import KeygateStore

// `import Keygate` brings the whole public API: the engine's types (access controls,
// contexts, decisions, statuses), the audit trail (events, sinks, the verifier) and the stores.
@_exported public import KeygateAudit
@_exported public import KeygateItems
@_exported public import KeygatePolicy
@_exported public import KeygateStore

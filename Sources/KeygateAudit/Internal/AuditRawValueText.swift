import KeygatePolicy

// The raw values a trail line holds as they are: each enum's raw value as static
// text, written into the line with no `String` made and no escaper run over it. The same
// bytes as the raw value (`AuditRawValueTextTests` checks every case), none of which needs an
// escape (ASCII letters only).

extension AuditEvent.Kind {
    /// ``rawValue``'s bytes.
    var text: StaticString {
        switch self {
        case .add: "add"
        case .read: "read"
        case .update: "update"
        case .delete: "delete"
        case .sign: "sign"
        case .computeKey: "computeKey"
        case .export: "export"
        case .import: "import"
        case .evaluate: "evaluate"
        case .authenticate: "authenticate"
        case .lockout: "lockout"
        case .tamper: "tamper"
        case .policyReload: "policyReload"
        case .entitlement: "entitlement"
        case .recover: "recover"
        }
    }
}

extension AuditEvent.Verdict {
    /// ``rawValue``'s bytes.
    var text: StaticString {
        switch self {
        case .allow: "allow"
        case .deny: "deny"
        case .authenticate: "authenticate"
        case .proved: "proved"
        case .failed: "failed"
        case .cancelled: "cancelled"
        case .lockedOut: "lockedOut"
        case .unavailable: "unavailable"
        case .notAllowed: "notAllowed"
        case .recovered: "recovered"
        case .restarted: "restarted"
        }
    }
}

extension Factor {
    /// ``rawValue``'s bytes, as a trail line holds them.
    var auditText: StaticString {
        switch self {
        case .passcode: "passcode"
        case .biometry: "biometry"
        case .companion: "companion"
        case .applicationPassword: "applicationPassword"
        }
    }
}

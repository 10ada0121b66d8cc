import Glibc

/// This process's environment, read straight from `environ` (no Foundation `ProcessInfo`, which
/// costs start-up time in a short-lived command).
public enum ProcessEnvironment {
    /// Every variable of the environment now, by name; for a name given twice, the first.
    public static func current() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(text[..<equals])
                if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
    }

    /// The variables among `names` that are set, by name (as ``current()`` has them, without
    /// copying the rest of the environment).
    public static func values(_ names: [String]) -> [String: String] {
        var variables: [String: String] = [:]
        for name in names { variables[name] = value(name) }
        return variables
    }

    /// The variable `name`, or nil when it is not set (`getenv`).
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// One D-Bus value with its type (the D-Bus specification's type system): what a method call
/// carries in and what a reply or signal carries out. A byte array is kept whole (`ay`), so a
/// secret's bytes, NUL and newline included, cross unchanged.
public indirect enum DBusValue: Sendable, Hashable {
    /// `y`.
    case byte(UInt8)
    /// `b`.
    case boolean(Bool)
    /// `i` (an `n` read is widened to it).
    case int32(Int32)
    /// `u` (a `q` read is widened to it).
    case uint32(UInt32)
    /// `x`.
    case int64(Int64)
    /// `t`.
    case uint64(UInt64)
    /// `d`.
    case double(Double)
    /// `s`.
    case string(String)
    /// `o`.
    case objectPath(String)
    /// `g`.
    case signature(String)
    /// `ay`.
    case bytes([UInt8])
    /// `a` of `elementSignature` (a dictionary is an array of ``dictEntry(_:_:)``).
    case array(elementSignature: String, [DBusValue])
    /// `(…)`.
    case structure([DBusValue])
    /// `{kv}`, inside an array only.
    case dictEntry(DBusValue, DBusValue)
    /// `v`.
    case variant(DBusValue)
    /// `h`: a descriptor. Read, it is a duplicate the reader owns and closes; written, the
    /// message takes a duplicate of its own.
    case unixFileDescriptor(Int32)

    /// The value's D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .variant: "v"
        case .unixFileDescriptor: "h"
        }
    }

    // MARK: - Reading

    /// The string of a `s`, `o` or `g` value, else nil.
    public var text: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// The value inside a variant (or the value itself).
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The entries of an `a{…}` dictionary, else nil.
    public var dictionaryEntries: [(key: DBusValue, value: DBusValue)]? {
        guard case .array(_, let elements) = self else { return nil }
        var entries: [(key: DBusValue, value: DBusValue)] = []
        for element in elements {
            guard case .dictEntry(let key, let value) = element else { return nil }
            entries.append((key, value))
        }
        return entries
    }

}

extension DBusValue: CustomStringConvertible {
    /// The type and shape only: a value may be a secret, so no bytes or strings are shown.
    public var description: String { "D-Bus value of type \(signature)" }
}

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

extension SecretData {
    /// Copies the bytes of `data`. `Data` is not wiped on release: prefer reading secrets
    /// straight into a `SecretData` when you can.
    public convenience init(_ data: Data) { self.init(bytes: data) }

    /// A copy of the bytes as `Data`, for APIs that take it. The copy is not wiped on
    /// release; keep it short-lived.
    public func dataCopy() -> Data { withUnsafeBytes { Data($0) } }

    /// The bytes as a `String` when they are valid UTF-8, else nil. The string is not wiped on
    /// release (Swift strings cannot be); keep it short-lived, and never log it.
    public func utf8String() -> String? {
        withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }
}

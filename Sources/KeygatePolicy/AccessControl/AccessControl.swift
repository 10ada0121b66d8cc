/// An item's access control: its protection class plus the constraint that reading or
/// updating its data must satisfy, like Apple's `SecAccessControl`.
///
/// Create one with ``init(protection:flags:)``, which validates exactly as
/// `SecAccessControlCreateWithFlags` does (spec §1.2). Two access controls are equal when
/// they mean the same thing: the same class, tree, options and bound enrollment.
///
/// ```swift
/// let control = try AccessControl(protection: .whenUnlockedThisDeviceOnly,
///                                 flags: [.biometryCurrentSet, .or, .devicePasscode])
/// print(control.textForm)   // aku;od(pkofn(1) cup(true) cbio(pbioc(<>) pbioh(<>)));oe(true);odel(true)
/// ```
public struct AccessControl: Hashable, Sendable {
    /// When the item's data is available (`prot`).
    public let protection: ProtectionClass
    /// The compiled constraint. It guards decryption (`od`), or with ``isPrivateKeyUsage`` the key operations.
    public let constraint: Constraint
    /// True when created with `privateKeyUsage`: the constraint governs key operations, and item
    /// decryption is not granted at all.
    public let isPrivateKeyUsage: Bool
    /// True when created with `applicationPassword` (`prp`): an application password is also required.
    public let requiresApplicationPassword: Bool

    /// Validates `flags` for `protection` and compiles them, as `SecAccessControlCreateWithFlags` does.
    ///
    /// The checks, in Apple's order: `or` with `and`, both biometry flags, and `userPresence`
    /// with any other constraint or conjunction are `errSecParam`; so are bits Apple does not
    /// define. Two or more constraints form one k-of-n node, k = 1 with `or` and k = n
    /// otherwise (AND is the default); one constraint ignores `or`/`and`; no constraint allows
    /// everything (`dacl(true)`).
    /// - Throws: ``KeygateError`` with `errSecParam` naming the rule that failed.
    public init(protection: ProtectionClass, flags: AccessControlFlags = []) throws(KeygateError) {
        if flags.isSuperset(of: [.or, .and]) {
            throw KeygateError(.param, "only one logical operation may be set: 'or' and 'and' are both present")
        }
        if flags.isSuperset(of: [.biometryAny, .biometryCurrentSet]) {
            throw KeygateError(
                .param, "only one biometry constraint may be set: 'biometryAny' and 'biometryCurrentSet'")
        }
        if flags.contains(.userPresence),
            !flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage]).isEmpty
        {
            throw KeygateError(
                .param,
                "'userPresence' cannot be combined with "
                    + flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage]).names.joined(
                        separator: ","))
        }
        let unknown = flags.subtracting(.allDefined)
        if !unknown.isEmpty {
            throw KeygateError(.param, "unknown access-control flag bits \(unknown.names.joined(separator: ","))")
        }
        var leaves = Constraint.LeafSet()
        if flags.contains(.userPresence) { leaves.insert(.devicePolicy) }
        if flags.contains(.devicePasscode) { leaves.insert(.passcode) }
        if flags.contains(.biometryAny) { leaves.insert(.biometryAny) }
        if flags.contains(.biometryCurrentSet) { leaves.insert(.biometryCurrentSet) }
        if flags.contains(.companion) { leaves.insert(.companion) }
        let constraint: Constraint =
            leaves.isEmpty ? .allow : Constraint(leaves: leaves, threshold: flags.contains(.or) ? 1 : leaves.count)
        self.init(
            protection: protection, constraint: constraint, isPrivateKeyUsage: flags.contains(.privateKeyUsage),
            requiresApplicationPassword: flags.contains(.applicationPassword))
    }

    /// Like `SecAccessControlCreateWithFlags` with a protection given as a raw string
    /// (`ak`, `aku`, …) or Apple's name without prefix; nil or anything else is `errSecParam`
    /// ("invalid protection"), checked before the flags as Apple does.
    public init(protectionValue: String?, flags: AccessControlFlags) throws(KeygateError) {
        guard let protectionValue, let protection = try? ProtectionClass(parsing: protectionValue) else {
            throw KeygateError(
                .param, "invalid protection '\(protectionValue ?? "(none)")': a protection class is required")
        }
        try self.init(protection: protection, flags: flags)
    }

    init(
        protection: ProtectionClass, constraint: Constraint, isPrivateKeyUsage: Bool, requiresApplicationPassword: Bool
    ) {
        self.protection = protection
        self.constraint = constraint
        self.isPrivateKeyUsage = isPrivateKeyUsage
        self.requiresApplicationPassword = requiresApplicationPassword
    }

    /// The canonical flags this access control compiles from: `or`/`and` appear only with
    /// two or more constraints, and `and` is spelled out.
    public var flags: AccessControlFlags {
        var flags = AccessControlFlags()
        let leaves = constraint.leaves
        if leaves.contains(.devicePolicy) { flags.insert(.userPresence) }
        if leaves.contains(.passcode) { flags.insert(.devicePasscode) }
        if leaves.contains(.biometryAny) { flags.insert(.biometryAny) }
        if leaves.contains(.biometryCurrentSet) { flags.insert(.biometryCurrentSet) }
        if leaves.contains(.companion) { flags.insert(.companion) }
        if constraint.isKOfN { flags.insert(constraint.threshold == 1 ? .or : .and) }
        if isPrivateKeyUsage { flags.insert(.privateKeyUsage) }
        if requiresApplicationPassword { flags.insert(.applicationPassword) }
        return flags
    }

    /// The enrollment set a `biometryCurrentSet` constraint was bound to when the item was added.
    public var boundEnrollment: EnrollmentSetHash? { constraint.boundEnrollment }

    /// True when a `biometryCurrentSet` constraint still has to be bound (at add time).
    public var needsBinding: Bool { constraint.needsBinding }

    /// This access control with its `biometryCurrentSet` leaf bound to `hash` (Apple's bind step, spec §1.4).
    public func bound(to hash: EnrollmentSetHash) -> AccessControl {
        AccessControl(
            protection: protection, constraint: constraint.bound(to: hash), isPrivateKeyUsage: isPrivateKeyUsage,
            requiresApplicationPassword: requiresApplicationPassword)
    }

    /// What a key's creation is checked with: this access control without `privateKeyUsage`,
    /// which governs the key's uses, not its making. Its class must be available, a passcode
    /// set when the class needs one, and biometry enrolled to bind a `biometryCurrentSet`
    /// constraint, as for an item's add (spec 9.3, 9.5.7).
    public var creationCheck: AccessControl {
        AccessControl(
            protection: protection, constraint: constraint, isPrivateKeyUsage: false,
            requiresApplicationPassword: requiresApplicationPassword)
    }

    /// An access control that nothing satisfies (`od(false)`): what a store reports for an
    /// item whose stored access control cannot be trusted.
    public init(unsatisfiableWith protection: ProtectionClass) {
        self.init(
            protection: protection, constraint: .deny, isPrivateKeyUsage: false, requiresApplicationPassword: false)
    }

    /// This access control with another protection class and the same constraints and options.
    public func with(protection: ProtectionClass) -> AccessControl {
        AccessControl(
            protection: protection, constraint: constraint, isPrivateKeyUsage: isPrivateKeyUsage,
            requiresApplicationPassword: requiresApplicationPassword)
    }

    /// The constraint guarding `operation`, or nil when the access control grants no such
    /// operation (Apple's lookup: the operation's entry, else `dacl`, else deny).
    public func constraint(for operation: Operation) -> Constraint? {
        switch operation {
        case .delete: return .allow
        case .add: return isPrivateKeyUsage ? nil : .allow
        case .read, .update:
            if isPrivateKeyUsage { return nil }
            return constraint
        case .sign, .computeKey:
            // `privateKeyUsage` puts the constraint on the key operations; no flags at all is
            // `dacl(true)`, which allows them; a constraint without it leaves them no entry
            // and no `dacl`: denied (spec §9.5 table, §9.5.4, §9.5.5).
            if isPrivateKeyUsage { return constraint }
            return constraint.kind == .allow && !requiresApplicationPassword ? .allow : nil
        }
    }
}

extension AccessControl: CustomStringConvertible {
    /// `<AccessControl: text form>`; it holds no secret.
    public var description: String { "<AccessControl: \(textForm)>" }
}

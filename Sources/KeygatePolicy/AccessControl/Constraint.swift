/// The compiled constraint of an access control: Apple's flat constraint tree (spec §1.3).
///
/// Apple's tree has depth at most one: `true` (allow), `false` (deny), a single leaf, or one
/// k-of-n node holding at most one leaf of each type. Keygate stores exactly that shape in a
/// few inline fields, so evaluating it never allocates; ``node`` gives the inspectable tree.
public struct Constraint: Hashable, Sendable {
    /// The shape of the constraint.
    public enum Kind: Hashable, Sendable {
        /// `true`: every request is allowed without authentication.
        case allow
        /// `false`: every request is denied.
        case deny
        /// One leaf (``threshold`` 1) or a k-of-n node over two or more leaves.
        case leaves
    }

    /// The shape.
    public let kind: Kind
    /// How many of ``leaves`` must be satisfied (k); 0 for `allow` and `deny`.
    public let threshold: Int
    /// The leaves present.
    public let leaves: LeafSet
    /// The enrollment-set hash a `biometryCurrentSet` leaf is bound to (`pbioh`), once bound.
    public let boundEnrollment: EnrollmentSetHash?

    /// The constraint that allows everything (`true`).
    public static let allow = Constraint(kind: .allow, threshold: 0, leaves: [], boundEnrollment: nil)
    /// The constraint that denies everything (`false`).
    public static let deny = Constraint(kind: .deny, threshold: 0, leaves: [], boundEnrollment: nil)

    init(kind: Kind, threshold: Int, leaves: LeafSet, boundEnrollment: EnrollmentSetHash?) {
        self.kind = kind
        self.threshold = threshold
        self.leaves = leaves
        self.boundEnrollment = boundEnrollment
    }

    /// A constraint over `leaves`: a single leaf, or a k-of-n node with `threshold` k.
    init(leaves: LeafSet, threshold: Int) {
        self.init(kind: .leaves, threshold: leaves.count == 1 ? 1 : threshold, leaves: leaves, boundEnrollment: nil)
    }

    /// True when this is a k-of-n node (two or more leaves).
    public var isKOfN: Bool { kind == .leaves && leaves.count >= 2 }

    /// True when a `biometryCurrentSet` leaf is present but not yet bound to an enrollment set.
    public var needsBinding: Bool { leaves.contains(.biometryCurrentSet) && boundEnrollment == nil }

    /// This constraint with its `biometryCurrentSet` leaf bound to `hash`; unchanged without such a leaf.
    public func bound(to hash: EnrollmentSetHash) -> Constraint {
        guard leaves.contains(.biometryCurrentSet) else { return self }
        return Constraint(kind: kind, threshold: threshold, leaves: leaves, boundEnrollment: hash)
    }

    /// The inspectable tree.
    public var node: Node {
        switch kind {
        case .allow: return .allow
        case .deny: return .deny
        case .leaves:
            let children = leaves.members.map { leaf(for: $0) }
            if children.count == 1 { return .leaf(children[0]) }
            return .kOfN(k: threshold, children: children)
        }
    }

    private func leaf(for member: LeafSet) -> Leaf {
        switch member {
        case .devicePolicy: .devicePolicy
        case .passcode: .passcode
        case .biometryAny: .biometry(.any)
        case .biometryCurrentSet: .biometry(.currentSet(boundEnrollment))
        default: .companion
        }
    }

    /// A node of the inspectable tree.
    public indirect enum Node: Hashable, Sendable {
        /// `true`: allowed without authentication.
        case allow
        /// `false`: always denied.
        case deny
        /// A single leaf.
        case leaf(Leaf)
        /// At least `k` of `children` must be satisfied (`pkofn`).
        case kOfN(k: Int, children: [Leaf])
    }

    /// A leaf constraint: one way to prove presence.
    public enum Leaf: Hashable, Sendable {
        /// `cpo(DeviceOwnerAuthentication)`: biometry or the passcode (`userPresence`).
        case devicePolicy
        /// `cup(true)`: the device passcode.
        case passcode
        /// `cbio`: biometry, any enrolled set or the set bound at add time.
        case biometry(BiometrySet)
        /// `cwtch(true)`: a paired companion device.
        case companion
    }

    /// Which biometric enrollment a `cbio` leaf accepts.
    public enum BiometrySet: Hashable, Sendable {
        /// Any enrolled template (`biometryAny`).
        case any
        /// Only the set enrolled when the item was added (`biometryCurrentSet`); nil until bound.
        case currentSet(EnrollmentSetHash?)
    }

    /// The leaf types present in a constraint, one bit each.
    public struct LeafSet: OptionSet, Hashable, Sendable {
        /// The bit pattern.
        public let rawValue: UInt8
        /// Wraps a bit pattern.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `userPresence`'s policy leaf.
        public static let devicePolicy = LeafSet(rawValue: 1 << 0)
        /// The passcode leaf.
        public static let passcode = LeafSet(rawValue: 1 << 1)
        /// A `biometryAny` leaf.
        public static let biometryAny = LeafSet(rawValue: 1 << 2)
        /// A `biometryCurrentSet` leaf.
        public static let biometryCurrentSet = LeafSet(rawValue: 1 << 3)
        /// The companion leaf.
        public static let companion = LeafSet(rawValue: 1 << 4)

        /// How many leaves are present.
        public var count: Int { rawValue.nonzeroBitCount }

        /// The single-leaf members, in Apple's construction order.
        public var members: [LeafSet] {
            [.devicePolicy, .passcode, .biometryAny, .biometryCurrentSet, .companion].filter { contains($0) }
        }
    }
}

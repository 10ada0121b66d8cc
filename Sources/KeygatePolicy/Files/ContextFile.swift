/// The context file of `keygate evaluate` and of the decision corpus: an authentication
/// state described relative to "now".
///
/// ```json
/// {"device": {"locked": false, "unlockedSinceBoot": true, "passcodeSet": true},
///  "biometry": {"available": true, "enrolled": ["f1", "f2"], "lockedOut": false},
///  "proofs": [{"factor": "passcode", "secondsAgo": 0},
///             {"factor": "biometry", "secondsAgo": 3, "enrolled": ["f1", "f2"]}],
///  "reuseSeconds": 10, "interaction": "allow"}
/// ```
///
/// Every key is optional and unknown keys are errors. Defaults: unlocked, unlocked since
/// boot, passcode set, biometry unavailable, no proofs, reuse 0, interaction `allow`.
/// `reuseSeconds` above 300 is clamped to 300, as Apple clamps it. A biometry proof without
/// `enrolled` was made under the context's current enrollment. Keygate also accepts
/// `"companion": {"available": bool}` and `"invalidated": bool`.
public struct ContextFile: Sendable {
    /// The described state, with proof times relative to ``now``.
    public let state: AuthenticationState
    /// The moment the file describes; pass it to the evaluator.
    public let now: Timestamp

    /// The fixed "now" of context files (any instant works; ages are relative to it).
    public static let referenceTime = Timestamp(seconds: 1_800_000_000)

    /// Decodes a context file.
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - file: the path used in error messages.
    /// - Throws: ``InputFileError`` naming the line, column and field of the first problem.
    public init(parsing text: String, file: String) throws(InputFileError) {
        try self.init(field: JSONField.parse(text, file: file))
    }

    package init(field root: JSONField) throws(InputFileError) {
        let now = Self.referenceTime
        var state = AuthenticationState()
        let top = try root.object(allowing: [
            "device", "biometry", "proofs", "reuseSeconds", "interaction", "companion", "invalidated",
        ])
        if let device = try top["device"]?.object(allowing: ["locked", "unlockedSinceBoot", "passcodeSet"]) {
            if let value = try device["locked"]?.bool() { state.device.isLocked = value }
            if let value = try device["unlockedSinceBoot"]?.bool() { state.device.hasBeenUnlockedSinceBoot = value }
            if let value = try device["passcodeSet"]?.bool() { state.device.isPasscodeSet = value }
        }
        if let biometry = try top["biometry"]?.object(allowing: ["available", "enrolled", "lockedOut"]) {
            if let value = try biometry["available"]?.bool() { state.biometry.isAvailable = value }
            if let value = biometry["enrolled"] { state.biometry.enrollment = try Self.enrollment(value) }
            if let value = try biometry["lockedOut"]?.bool() { state.biometry.isLockedOut = value }
        }
        if let companion = try top["companion"]?.object(allowing: ["available"]) {
            if let value = try companion["available"]?.bool() { state.isCompanionAvailable = value }
        }
        for entry in try top["proofs"]?.array() ?? [] {
            let proof = try entry.object(allowing: ["factor", "secondsAgo", "enrolled"])
            guard let factorField = proof["factor"] else { throw entry.error("a proof needs a 'factor'") }
            let factor = Factor(rawValue: try factorField.choice(Factor.allCases.map(\.rawValue)))!
            guard let agoField = proof["secondsAgo"] else { throw entry.error("a proof needs 'secondsAgo'") }
            let secondsAgo = try agoField.int()
            guard (-1_000_000_000...1_000_000_000).contains(secondsAgo) else {
                throw agoField.error("secondsAgo must be within ±1000000000")
            }
            var enrollment: EnrollmentSetHash?
            if let value = proof["enrolled"] {
                guard factor == .biometry else { throw value.error("only a biometry proof has an enrollment set") }
                enrollment = try Self.enrollment(value)
            } else if factor == .biometry {
                enrollment = state.biometry.enrollment
            }
            guard state.proofs[factor] == nil else { throw entry.error("a second proof of \(factor)") }
            state.proofs.record(
                Proof(factor: factor, time: now.adding(seconds: -Double(secondsAgo)), enrollment: enrollment))
        }
        if let field = top["reuseSeconds"] {
            let seconds = try field.int()
            guard seconds >= 0 else { throw field.error("reuseSeconds must not be negative") }
            state.setReuseSeconds(seconds)
        }
        if let field = top["interaction"] {
            state.interaction = InteractionPolicy(
                rawValue: try field.choice(InteractionPolicy.allCases.map(\.rawValue)))!
        }
        if let value = try top["invalidated"]?.bool(), value {
            state.isInvalidated = true
        }
        self.state = state
        self.now = now
    }

    private static func enrollment(_ field: JSONField) throws(InputFileError) -> EnrollmentSetHash? {
        var ids: [String] = []
        for item in try field.array() {
            let id = try item.string()
            guard !id.isEmpty else { throw item.error("a template id must not be empty") }
            ids.append(id)
        }
        return EnrollmentSetHash(templateIDs: ids)
    }
}

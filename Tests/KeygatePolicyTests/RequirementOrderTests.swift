import KeygatePolicy
import Testing

/// The order of a requirement's alternatives: those with biometry first, otherwise in the
/// order of the constraint's leaves (spec §4.1, `.deviceOwnerAuthentication`: "Biometry
/// first, then passcode"). The evaluator reorders only when an alternative with biometry
/// came after one without, so these pin the result for every way that can happen.
@Suite struct RequirementOrderTests {
    let now = Timestamp(seconds: 1_800_000_000)
    let enrolled = EnrollmentSetHash(templateIDs: ["f1"])!

    func requirement(_ flags: AccessControlFlags, companion: Bool = false, passcodeLockedOut: Bool = false)
        throws -> Requirement?
    {
        var attempts = FactorAttempts()
        if passcodeLockedOut { attempts.passcode.lockedUntil = now.adding(seconds: 60) }
        let state = AuthenticationState(
            biometry: BiometryState(isAvailable: true, enrollment: enrolled), isCompanionAvailable: companion,
            attempts: attempts)
        let control = try AccessControl(protection: .whenUnlocked, flags: flags)
        return Evaluator().evaluate(control, operation: .read, state: state, now: now).requirement
    }

    @Test func passcodeOrBiometryAsksForBiometryFirst() throws {
        // The passcode leaf comes before the biometry leaf: reordered.
        #expect(try requirement([.devicePasscode, .biometryAny, .or]) == Requirement([.biometry, .passcode]))
    }

    @Test func companionStaysAfterPasscodeOnceBiometryLeads() throws {
        #expect(
            try requirement([.devicePasscode, .biometryAny, .companion, .or], companion: true)
                == Requirement([.biometry, .passcode, .companion]))
        #expect(
            try requirement([.devicePasscode, .companion, .or], companion: true)
                == Requirement([.passcode, .companion]))
    }

    @Test func userPresenceIsBiometryThenPasscode() throws {
        #expect(try requirement(.userPresence) == Requirement([.biometry, .passcode]))
        #expect(try requirement(.userPresence, passcodeLockedOut: true) == Requirement([.biometry]))
        #expect(
            try requirement([.userPresence, .applicationPassword])
                == Requirement([[.biometry, .applicationPassword], [.passcode, .applicationPassword]]))
    }

    @Test func allOfSeveralLeavesIsOneAlternative() throws {
        #expect(
            try requirement([.devicePasscode, .biometryAny, .companion, .and], companion: true)
                == Requirement([[.passcode, .biometry, .companion]]))
    }
}

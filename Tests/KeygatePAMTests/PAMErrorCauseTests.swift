import KeygatePAM
import KeygatePolicy
import Testing

/// Issue 13 point 3: PAM's failures keep their cause.
@Suite struct PAMErrorCauseTests {
    /// A PAM library that cannot be loaded is named as such, not as a bare errSecNotAvailable.
    @Test func aLibraryThatDoesNotLoadIsNamed() throws {
        let error = #expect(throws: KeygateError.self) { try PAMLibrary.load("/nonexistent/libpam_wrapper.so") }
        #expect(error?.status == .notAvailable)
        #expect(error?.condition == .libraryNotLoaded)
    }

    /// A library without the PAM functions (libc here) is refused with the same condition.
    @Test func aLibraryWithoutThePAMFunctionsIsNamed() throws {
        let error = #expect(throws: KeygateError.self) { try PAMLibrary.load("libc.so.6") }
        #expect(error?.condition == .libraryNotLoaded)
    }
}

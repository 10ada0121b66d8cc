import Foundation
import Glibc
import Testing

@testable import keygated

/// The two places where a peer that exits could be taken for another process: a failed
/// `SO_PEERPIDFD` (only a kernel without the option may fall back to `pidfd_open(pid)`), and
/// what is read by pid number after the pidfd was taken (checked against the pidfd afterwards).
@Suite struct PeerIdentityTests {
    /// `ENOPROTOOPT` (before Linux 6.5) falls back; `EINVAL` (a kernel that knows the option, whose
    /// peer has exited) and every other failure refuse the connection.
    @Test func onlyAKernelWithoutTheOptionFallsBackToPidfdOpen() {
        #expect(PeerIdentity.peerPidfdUnsupported(errno: ENOPROTOOPT))
        for code in [EINVAL, ESRCH, ENOENT, ENODATA, EPROTO, EOPNOTSUPP, ENOMEM, EMFILE] {
            #expect(!PeerIdentity.peerPidfdUnsupported(errno: code), "errno \(code)")
        }
    }
}

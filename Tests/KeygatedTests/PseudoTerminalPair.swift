import Glibc
import Testing

/// A new pseudo-terminal: the controlling side (`master`) and the terminal a child gets as its
/// own (`slave`, opened without becoming this process's controlling terminal). Both are
/// close-on-exec; the caller closes them.
struct PseudoTerminalPair {
    let master: Int32
    let slave: Int32

    init() throws {
        // posix_openpt and friends need _XOPEN_SOURCE, which the Glibc module does not define.
        typealias Call = @convention(c) (Int32) -> Int32
        typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        let libc = dlopen(nil, RTLD_NOW)
        func call(_ name: String) throws -> Call { unsafeBitCast(try #require(dlsym(libc, name)), to: Call.self) }
        let master = try call("posix_openpt")(O_RDWR | O_NOCTTY | O_CLOEXEC)
        let (grant, unlock) = (try call("grantpt"), try call("unlockpt"))
        try #require(master >= 0 && grant(master) == 0 && unlock(master) == 0)
        let name = unsafeBitCast(try #require(dlsym(libc, "ptsname")), to: Name.self)
        let slave = open(String(cString: try #require(name(master))), O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(slave >= 0)
        (self.master, self.slave) = (master, slave)
    }
}

import Foundation
import KeygateLinux
import KeygatePolicy
import Testing

/// The enrollment file is trusted only when no one but the reading user or root could have
/// written it: a file another user may write, a symbolic link, or a file that does not parse
/// is *biometry unavailable* with a reason naming the file, never a changed set (which would
/// invalidate every `biometryCurrentSet` item).
@Suite struct EnrollmentFileTrustTests {
    /// The snapshot of a device reading the enrollment file at `path`, and its warnings.
    static func read(_ path: String) -> (snapshot: DeviceSnapshot, warnings: [String]) {
        let warnings = WarningLog()
        let device = LinuxDevice(
            mode: .unlocked, environment: ["KEYGATE_ENROLLMENT_FILE": path, "PATH": "/nonexistent"],
            onWarning: { warnings.append($0) })
        return (device.snapshot(), warnings.all)
    }

    /// A trusted file (ours, 0644) reads as its set; the same file with another writer does not.
    @Test func aFileOthersMayWriteIsUnavailableNotAChangedSet() throws {
        let home = try StandardKeychainTests.Home()
        let path = home.directory + "/enrolled"
        try "right-index\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(chmod(path, 0o644) == 0)
        let trusted = Self.read(path)
        #expect(trusted.snapshot.enrollment == EnrollmentSetHash(templateIDs: ["right-index"]))
        #expect(trusted.warnings.isEmpty)

        // Another user's file, as in the report: nobody owns it, and it is 0666.
        try "f2\n".write(toFile: path, atomically: false, encoding: .utf8)
        for (owner, mode) in [(geteuid(), 0o666), (geteuid(), 0o620), (65534, 0o644), (65534, 0o666)]
            as [(uid_t, mode_t)]
        {
            #expect(chown(path, owner, getegid()) == 0 && chmod(path, mode) == 0)
            let read = Self.read(path)
            #expect(!read.snapshot.biometryAvailable && read.snapshot.enrollment == nil, "uid \(owner) mode \(mode)")
            #expect(read.warnings.count == 1)
            #expect(read.warnings.first?.contains("the enrollment file \(path)") == true, "\(read.warnings)")
            #expect(read.warnings.first?.contains("not trusted") == true, "\(read.warnings)")
        }
    }

    /// A symbolic link is not followed, even to a trusted file.
    @Test func aSymbolicLinkIsNotFollowed() throws {
        let home = try StandardKeychainTests.Home()
        let target = home.directory + "/enrolled"
        try "right-index\n".write(toFile: target, atomically: true, encoding: .utf8)
        #expect(chmod(target, 0o644) == 0)
        #expect(Self.read(target).snapshot.biometryAvailable)
        let link = home.directory + "/link"
        #expect(symlink(target, link) == 0)
        let read = Self.read(link)
        #expect(!read.snapshot.biometryAvailable && read.snapshot.enrollment == nil)
        #expect(read.warnings.first?.contains("the enrollment file \(link)") == true, "\(read.warnings)")
        #expect(read.warnings.first?.contains("symbolic link") == true, "\(read.warnings)")
    }

    /// A file that does not parse (not UTF-8) or names nothing is unavailable, not an empty set.
    @Test func aFileThatDoesNotParseIsUnavailable() throws {
        let home = try StandardKeychainTests.Home()
        let path = home.directory + "/enrolled"
        for bytes in [[0xff, 0xfe, 0x0a], Array("# only a comment\n\n".utf8)] as [[UInt8]] {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, 0o600) == 0)
            let read = Self.read(path)
            #expect(!read.snapshot.biometryAvailable && read.snapshot.enrollment == nil, "\(bytes)")
            #expect(read.warnings.first?.contains("the enrollment file \(path)") == true, "\(read.warnings)")
        }
    }
}

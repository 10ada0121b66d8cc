import Foundation
import KeygateTesting

/// A throwaway PAM world for one subprocess test: a pam_wrapper service directory, passdb
/// files, an `other` that denies, and optionally a fake passwd for nss_wrapper. The child
/// gets LD_PRELOAD=libpam_wrapper.so (and libnss_wrapper.so) and the wrapper variables; the
/// test process itself is untouched.
final class PAMWorld {
    static let modules = "/usr/lib/x86_64-linux-gnu/pam_wrapper"
    let directory: TemporaryDirectory
    let services: String
    var fakeUser: String?

    init() throws {
        directory = try TemporaryDirectory()
        services = directory.url.appendingPathComponent("services").path
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        try service(
            "other",
            "auth required pam_deny.so\naccount required pam_deny.so\npassword required pam_deny.so\nsession required pam_deny.so\n"
        )
    }

    /// Writes a service file.
    func service(_ name: String, _ text: String) throws {
        try text.write(toFile: services + "/" + name, atomically: true, encoding: .utf8)
    }

    /// A pam_matrix service accepting `password` for `user`.
    func matrixService(_ name: String, user: String, password: String) throws {
        let passdb = try directory.file("passdb-\(name)", contents: "\(user):\(password):\(name)\n")
        try service(
            name,
            "auth required \(Self.modules)/pam_matrix.so passdb=\(passdb)\n"
                + "account required \(Self.modules)/pam_matrix.so passdb=\(passdb)\n")
    }

    /// Maps this process's uid to `name` in a fake passwd served by nss_wrapper.
    func useFakeUser(_ name: String) throws {
        let uid = getuid()
        let gid = getgid()
        _ = try directory.file(
            "passwd", contents: "\(name):x:\(uid):\(gid):Keygate test:/nonexistent:/usr/sbin/nologin\n")
        _ = try directory.file("group", contents: "\(name):x:\(gid):\n")
        fakeUser = name
    }

    /// The environment that puts the child in this world, with its own data and runtime
    /// directories so that no test touches the real user's store, trail or failure counter.
    var environment: [String: String] {
        var env = [
            "LD_PRELOAD": "libpam_wrapper.so", "PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": services,
            "XDG_DATA_HOME": directory.url.appendingPathComponent("pam-data").path,
        ]
        if fakeUser != nil {
            env["LD_PRELOAD"] = "libpam_wrapper.so:libnss_wrapper.so"
            env["NSS_WRAPPER_PASSWD"] = directory.url.appendingPathComponent("passwd").path
            env["NSS_WRAPPER_GROUP"] = directory.url.appendingPathComponent("group").path
        }
        return env
    }

    /// The owner of this process as the child will see it.
    static func currentUser() -> String {
        getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
    }
}

import Foundation
import KeygateTesting
import Testing

/// git and docker as real clients: `git-credential-keygate` driven by the real `git`, and
/// `docker-credential-keygate` driven exactly as docker drives it (one action argument,
/// the request on standard input, the answer or an error line on standard output).
@Suite struct CredentialHelperTests {
    /// A directory of helper links to the built `keygate`, put first on PATH.
    final class Helpers {
        let directory: TemporaryDirectory
        var bin: String { directory.url.appendingPathComponent("bin").path }
        var home: String { directory.url.appendingPathComponent("home").path }

        init() throws {
            directory = try TemporaryDirectory()
            for path in [bin, home] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            for name in ["git-credential-keygate", "docker-credential-keygate"] {
                try FileManager.default.createSymbolicLink(
                    atPath: bin + "/" + name, withDestinationPath: KeygateBinary.url.path)
            }
        }

        func environment(_ world: CLIWorld) -> [String: String] {
            var env = world.environment
            env["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            env["HOME"] = home
            env["GIT_CONFIG_NOSYSTEM"] = "1"
            env["GIT_TERMINAL_PROMPT"] = "0"
            return env
        }
    }

    /// Runs `git credential ACTION` with the keygate helper configured by `helper`; `passphrase`
    /// is readable on descriptor 3 (empty: the prompt is cancelled).
    static func git(
        _ action: String, _ description: String, helper: String, passphrase: String = "", world: CLIWorld,
        helpers: Helpers
    ) throws -> KeygateBinary.Result {
        let file = world.directory.url.appendingPathComponent("fd3-\(UUID().uuidString)").path
        try Data(passphrase.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = "exec git -c credential.helper= -c 'credential.helper=\(helper)' credential \(action) 3<'\(file)'"
        return try KeygateBinary.run(
            ["-c", script], stdin: Data(description.utf8), environment: helpers.environment(world),
            executable: URL(fileURLWithPath: "/bin/sh"))
    }

    static func authenticationRecords(_ world: CLIWorld) throws -> Int {
        let trail = (try? String(contentsOfFile: world.audit, encoding: .utf8)) ?? ""
        return trail.split(separator: "\n").filter { $0.contains("\"op\": \"authenticate\"") }.count
    }

    @Test func gitFetchesAProtectedCredentialAfterAPassphraseAndCancelMeansQuit() throws {
        let world = try CLIWorld()
        let helpers = try Helpers()
        let helper = "keygate --passphrase-fd 3 --access-control devicePasscode"
        let credential = "protocol=https\nhost=git.example.com\nusername=bob\npassword=p4ss-w0rd\n\n"
        #expect(try Self.git("approve", credential, helper: helper, world: world, helpers: helpers).status == 0)
        let listed = try world.run(["list"]).stdoutText
        #expect(listed.contains("\"service\": \"git:https://git.example.com\""))
        #expect(listed.contains("\"account\": \"bob\"") && !listed.contains("p4ss-w0rd"))

        // fill: the stored credential comes back only after the passphrase.
        let request = "protocol=https\nhost=git.example.com\n\n"
        var result = try Self.git(
            "fill", request, helper: helper, passphrase: "s3cret\n", world: world, helpers: helpers)
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("username=bob\n") && result.stdoutText.contains("password=p4ss-w0rd\n"))
        #expect(try Self.authenticationRecords(world) == 1)

        // approve of the credential just served: no second proof (an empty descriptor would cancel one).
        #expect(try Self.git("approve", credential, helper: helper, world: world, helpers: helpers).status == 0)
        #expect(try Self.authenticationRecords(world) == 1, "storing the unchanged credential asked nothing")

        // A cancelled prompt makes git stop (quit=1) instead of asking for the remote password.
        result = try Self.git("fill", request, helper: helper, passphrase: "", world: world, helpers: helpers)
        #expect(result.status != 0)
        #expect(result.stderr.contains("quit"), "git reports the helper told it to quit: \(result.stderr)")
        #expect(!result.stdoutText.contains("p4ss-w0rd"))

        // reject erases it: the next fill finds nothing in keygate.
        #expect(try Self.git("reject", credential, helper: helper, world: world, helpers: helpers).status == 0)
        #expect(try world.run(["list"]).stdoutText.isEmpty)
    }

    /// git ignores what a helper's `store` returns (`git credential approve` exits 0 whatever
    /// happens), so a rotated token that cannot be stored (a protected credential, no terminal to
    /// prove on) must not be lost unnoticed: the helper says on standard error, which git shows,
    /// that it was not stored and why, the old credential stays, and the trail has the refusal.
    @Test func aCredentialThatCannotBeStoredIsSaidThroughGitAndAudited() throws {
        let world = try CLIWorld()
        let helpers = try Helpers()
        let protected = "keygate --access-control devicePasscode"
        let old = "protocol=https\nhost=git.example.com\nusername=bob\npassword=old-t0ken\n\n"
        #expect(try Self.git("approve", old, helper: protected, world: world, helpers: helpers).status == 0)
        let rotated = "protocol=https\nhost=git.example.com\nusername=bob\npassword=new-t0ken\n\n"
        let result = try Self.git("approve", rotated, helper: protected, world: world, helpers: helpers)
        #expect(result.status == 0, "git approve exits 0 whatever the helper did")
        #expect(
            result.stderr.contains(
                "keygate: the new credential for git:https://git.example.com (bob) was NOT stored (nothing was changed):"
            ),
            "\(result.stderr)")
        #expect(result.stderr.contains("errSecInteractionNotAllowed"), "\(result.stderr)")
        #expect(!result.stderr.contains("new-t0ken") && !result.stderr.contains("old-t0ken"))
        // The old one is still there, unchanged.
        let fill = try Self.git(
            "fill", "protocol=https\nhost=git.example.com\n\n", helper: "keygate --passphrase-fd 3",
            passphrase: "s3cret\n",
            world: world, helpers: helpers)
        #expect(fill.stdoutText.contains("password=old-t0ken\n"), "\(fill.stderr)")
        let trail = (try? String(contentsOfFile: world.audit, encoding: .utf8)) ?? ""
        let refusals = trail.split(separator: "\n").filter {
            $0.contains("\"op\": \"update\"") && $0.contains("\"decision\": \"deny\"")
                && $0.contains("git:https://git.example.com")
        }
        #expect(refusals.count == 1, "\(trail)")
    }

    /// A local HTTP server with basic auth in front of `git http-backend`, on 127.0.0.1.
    static let gitServer = #"""
        import base64, http.server, os, subprocess, sys
        root, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self): self.serve()
            def do_POST(self): self.serve()
            def log_message(self, *args): pass
            def serve(self):
                if self.headers.get("Authorization") != expected:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                           QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_USER=user,
                           CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(length),
                           HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                           GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
                out = subprocess.run(["/usr/lib/git-core/git-http-backend"], input=body, env=env,
                                     capture_output=True).stdout
                separator = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
                head, _, content = out.partition(separator)
                status, headers = 200, []
                for line in head.replace(b"\r", b"").split(b"\n"):
                    key, _, value = line.decode().partition(": ")
                    if key.lower() == "status": status = int(value.split()[0])
                    elif key: headers.append((key, value))
                self.send_response(status)
                for key, value in headers: self.send_header(key, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)
        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_port, flush=True)
        server.serve_forever()
        """#

    @Test func gitClonesOverHTTPWithBasicAuthThroughKeygate() throws {
        let world = try CLIWorld()
        let helpers = try Helpers()
        let root = world.directory.url.appendingPathComponent("served").path
        let setup = """
            set -e
            git init -q --bare '\(root)/repo.git'
            git init -q '\(root)/work' && cd '\(root)/work'
            echo hello > README && git add README
            git -c user.name=t -c user.email=t@example.com commit -q -m first
            git push -q '\(root)/repo.git' HEAD:refs/heads/main
            git --git-dir='\(root)/repo.git' symbolic-ref HEAD refs/heads/main
            """
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let prepared = try KeygateBinary.run(
            ["-c", setup], stdin: Data(), environment: helpers.environment(world),
            executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(prepared.status == 0, "\(prepared.stderr)")
        let script = try world.directory.file("server.py", contents: Self.gitServer)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [script, root, "alice", "remote-pw"]
        let output = Pipe()
        server.standardOutput = output
        // Nothing of the test runner's: a server holding its output would keep it waiting.
        server.standardError = FileHandle.nullDevice
        server.standardInput = FileHandle.nullDevice
        try server.run()
        // SIGKILL: a child of the test process may start with SIGTERM blocked.
        defer { kill(server.processIdentifier, SIGKILL) }
        let portLine = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)))

        let helper = "keygate --passphrase-fd 3 --access-control devicePasscode"
        let credential = "protocol=http\nhost=127.0.0.1:\(port)\nusername=alice\npassword=remote-pw\n\n"
        #expect(try Self.git("approve", credential, helper: helper, world: world, helpers: helpers).status == 0)
        // The clone asks keygate, which asks for the local passphrase, then authenticates to the server.
        let destination = world.directory.url.appendingPathComponent("clone").path
        let file = world.directory.url.appendingPathComponent("fd3").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: file))
        let clone = try KeygateBinary.run(
            [
                "-c",
                "exec git -c credential.helper= -c 'credential.helper=\(helper)' clone -q "
                    + "http://127.0.0.1:\(port)/repo.git '\(destination)' 3<'\(file)'",
            ], stdin: Data(), environment: helpers.environment(world), executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(clone.status == 0, "\(clone.stderr)")
        #expect((try? String(contentsOfFile: destination + "/README", encoding: .utf8)) == "hello\n")
        // git asks its helper once per HTTP session; a clone may open more than one, and each
        // get of the protected credential asks for the local proof (no reuse window here).
        #expect(try Self.authenticationRecords(world) >= 1, "the clone needed a local proof")
    }

    @Test func aChangedCredentialReplacesTheStoredOneAndExtraFieldsAreKept() throws {
        let world = try CLIWorld()
        let helpers = try Helpers()
        let helper = "keygate --passphrase-fd 3"
        let first = "protocol=https\nhost=h.example\npath=org/repo.git\nusername=amy\npassword=old\n\n"
        #expect(try Self.git("approve", first, helper: helper, world: world, helpers: helpers).status == 0)
        // Driven directly, as a newer git sends them: the expiry and refresh token come back as stored.
        let second =
            "protocol=https\nhost=h.example\npath=org/repo.git\nusername=amy\npassword=new\n"
            + "password_expiry_utc=2000000000\noauth_refresh_token=r-token\ncapability[]=authtype\n\n"
        var result = try world.run(["credential", "store"], stdin: Data(second.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        result = try world.run(
            ["credential", "get"], stdin: Data("protocol=https\nhost=h.example\npath=org/repo.git\n\n".utf8))
        #expect(
            result.stdoutText
                == "username=amy\npassword=new\npassword_expiry_utc=2000000000\noauth_refresh_token=r-token\n")
        // Another path is another credential: git left the path out of its approve (https
        // credentials are per host unless credential.useHttpPath is set), so the host's is the old one.
        result = try world.run(["credential", "get"], stdin: Data("protocol=https\nhost=h.example\n\n".utf8))
        #expect(result.stdoutText == "username=amy\npassword=old\n")
        result = try world.run(["credential", "get"], stdin: Data("protocol=https\nhost=other.example\n\n".utf8))
        #expect(result.status == 0 && result.stdoutText.isEmpty, "nothing stored: no output")
        // Unknown actions are ignored, as git asks of helpers.
        #expect(try world.run(["credential", "capability"]).status == 0)
        // A malformed line is refused, naming the problem, and changes nothing.
        result = try world.run(["credential", "store"], stdin: Data("protocol=https\nhost\n\n".utf8))
        #expect(result.status == 8 && result.lastErrorLine.contains("key=value"))
    }

    @Test func dockerDrivesTheHelperAsItDoes() throws {
        let world = try CLIWorld()
        let helpers = try Helpers()
        let env = helpers.environment(world)
        let helper = URL(fileURLWithPath: helpers.bin + "/docker-credential-keygate")
        func docker(_ action: String, _ input: String) throws -> KeygateBinary.Result {
            try KeygateBinary.run([action], stdin: Data(input.utf8), environment: env, executable: helper)
        }
        let server = "https://registry.example.com/v1/"
        var result = try docker("store", #"{"ServerURL":"\#(server)","Username":"alice","Secret":"t\"ok\\en"}"#)
        #expect(result.status == 0, "\(result.stdoutText)")
        result = try docker("get", server + "\n")
        #expect(result.status == 0)
        #expect(result.stdoutText == #"{"ServerURL":"\#(server)","Username":"alice","Secret":"t\"ok\\en"}"# + "\n")
        // One credential per server: storing another user name replaces it.
        #expect(try docker("store", #"{"ServerURL":"\#(server)","Username":"<token>","Secret":"id"}"#).status == 0)
        result = try docker("list", "")
        #expect(result.stdoutText.contains(#""\#(server)": "<token>""#) && !result.stdoutText.contains("alice"))
        #expect(try docker("erase", server).status == 0)
        // Docker's exact not-found message, on standard output, exit 1.
        result = try docker("get", server)
        #expect(result.status == 1)
        #expect(result.stdoutText == "credentials not found in native keychain\n")
        result = try docker("store", #"{"ServerURL":"","Username":"a","Secret":"s"}"#)
        #expect(result.status == 1 && result.stdoutText == "no credentials server URL\n")
        #expect(try docker("version", "").stdoutText.hasPrefix("docker-credential-keygate"))
    }

    /// A store whose JSON is broken inside the secret (an unquoted password) is refused naming
    /// the place, never echoing the secret's characters, and stores nothing.
    @Test func brokenDockerJSONIsRefusedWithoutEchoingTheSecret() throws {
        let world = try CLIWorld()
        let result = try world.run(
            ["docker-credential", "store"],
            stdin: Data(#"{"ServerURL":"https://reg.example","Username":"alice","Secret":hunter2}"#.utf8))
        #expect(result.status == 1)
        let said = result.stdoutText + result.stderr
        #expect(said.contains("not JSON") && said.contains("column"), "\(said)")
        #expect(!said.contains("'h'") && !said.contains("hunter"), "\(said)")
        #expect(try world.run(["docker-credential", "list"], stdin: Data()).stdoutText == "{}\n")
    }

    /// Session 25, defect 2: replacing a server's credential with another user name's stores
    /// the new one before removing the old, so a refused store (a `forbid add` for that user)
    /// leaves the old credential in place; an allowed one still leaves one credential.
    @Test func aRefusedDockerStoreKeepsTheOldCredential() throws {
        let world = try CLIWorld()
        func docker(_ action: String, _ input: String) throws -> KeygateBinary.Result {
            try world.run(["docker-credential", action], stdin: Data(input.utf8))
        }
        let server = "https://reg.example"
        #expect(try docker("store", #"{"ServerURL":"\#(server)","Username":"alice","Secret":"a-secret"}"#).status == 0)
        try PolicyCommandTests.userPolicy(world, "rule \"no-bob\" { match account \"bob\"  forbid add }")
        var result = try docker("store", #"{"ServerURL":"\#(server)","Username":"bob","Secret":"b-secret"}"#)
        #expect(result.status == 1)
        #expect(result.stdoutText.contains("'no-bob'"), "\(result.stdoutText)")
        result = try docker("get", server)
        #expect(result.status == 0, "\(result.stdoutText)")
        #expect(result.stdoutText == #"{"ServerURL":"\#(server)","Username":"alice","Secret":"a-secret"}"# + "\n")
        // Allowed, the new user name's credential replaces the old: still one per server.
        #expect(try docker("store", #"{"ServerURL":"\#(server)","Username":"carol","Secret":"c-secret"}"#).status == 0)
        result = try docker("list", "")
        #expect(result.stdoutText.contains(#""\#(server)": "carol""#) && !result.stdoutText.contains("alice"))
        result = try docker("get", server)
        #expect(result.stdoutText == #"{"ServerURL":"\#(server)","Username":"carol","Secret":"c-secret"}"# + "\n")
    }
}

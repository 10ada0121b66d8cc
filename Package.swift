// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Keygate",
    products: [
        .library(name: "KeygatePolicy", targets: ["KeygatePolicy"]),
        .library(name: "KeygatePAM", targets: ["KeygatePAM"]),
        .library(name: "KeygateAudit", targets: ["KeygateAudit"]),
        .library(name: "KeygateItems", targets: ["KeygateItems"]),
        .library(name: "KeygateStore", targets: ["KeygateStore"]),
        .library(name: "KeygateKeys", targets: ["KeygateKeys"]),
        .library(name: "KeygateSSHAgent", targets: ["KeygateSSHAgent"]),
        .library(name: "KeygateDBus", targets: ["KeygateDBus"]),
        .library(name: "KeygateServing", targets: ["KeygateServing"]),
        .library(name: "Keygate", targets: ["Keygate"]),
        .library(name: "KeygateLinux", targets: ["KeygateLinux"]),
        .library(name: "KeygateTesting", targets: ["KeygateTesting"]),
        .executable(name: "keygate", targets: ["keygate"]),
        .library(name: "KeygateProtocol", targets: ["KeygateProtocol"]),
        .library(name: "KeygateClient", targets: ["KeygateClient"]),
        .executable(name: "keygated", targets: ["keygated"]),
    ],
    targets: [
        // Pure Swift: flags, protection classes, constraint tree, context, evaluator, input files.
        .target(
            name: "KeygatePolicy",
            swiftSettings: [
                .strictMemorySafety(),
                .treatWarning("StrictMemorySafety", as: .error),
            ]
        ),
        // libpam (Debian libpam0g-dev): module map and shim header only. libpam.so.0 is opened at the
        // first PAM transaction (KeygatePAM's PAMFunctions.linked), not linked.
        .systemLibrary(name: "CPAM", providers: [.apt(["libpam0g-dev"])]),
        // PAM-backed authenticators for the passcode and biometry factors.
        .target(name: "KeygatePAM", dependencies: ["KeygatePolicy", "CPAM"]),
        // SQLite and libsodium (Debian libsqlite3-dev, libsodium-dev): module map and shim header only.
        // No pkg-config: its -L of the system library directory would come first on the link line
        // and hide the static archives `make release` links instead (Makefile, STATIC_LIBS).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", providers: [.apt(["libsodium-dev"])]),
        // The audit trail: typed events, the hash chain, sinks (the JSON Lines file writer), the
        // streaming verifier and redaction.
        .target(name: "KeygateAudit", dependencies: ["KeygatePolicy", "KeygateItems", "CSodium", "CNettle"]),
        // Nettle (Debian nettle-dev): module map and shim header only. Its SHA-256 picks the
        // processor's SHA instructions at run time (libsodium's is portable C, about five times
        // slower per byte), for the audit chain; libsodium keeps HMAC and randomness.
        .systemLibrary(name: "CNettle", providers: [.apt(["nettle-dev"])]),
        // OpenSSL's libcrypto (Debian libssl-dev): module map and shim header only. P-256 (ECDSA,
        // ECDH) and AES-GCM with a 16-byte IV, which libsodium lacks; libsodium keeps Ed25519.
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        // Keys that never leave their keeper: key types, public-key forms (X9.63, OpenSSH, PEM),
        // signature algorithms, the KeyKeeper protocol and the software keeper.
        .target(name: "KeygateKeys", dependencies: ["KeygatePolicy", "KeygateItems", "CCrypto", "CSodium"]),
        // The ItemStore protocol and its backends: in memory, SQLite + libsodium.
        // The values a keychain request and reply are made of, below every store and facade:
        // secrets, queries, changes, matched items, the KeychainAccess protocol. Pure Swift and
        // Glibc, so an app that links only KeygateClient links no SQLite or libsodium.
        .target(name: "KeygateItems", dependencies: ["KeygatePolicy"]),
        .target(
            name: "KeygateStore", dependencies: ["KeygatePolicy", "KeygateItems", "CSQLite", "CSodium"]),
        // The gated facade: SecItem-style add / copyMatching / update / delete.
        .target(
            name: "Keygate",
            dependencies: ["KeygatePolicy", "KeygateItems", "KeygateAudit", "KeygateStore", "KeygateKeys"]),
        // libsystemd's sd-bus (Debian libsystemd-dev): module map and shim header only.
        // libsystemd.so.0 is opened at the first D-Bus question that needs sd-bus (Sources/CSystemd/loader.h),
        // not linked; logind's lock question on a plain `unix:path=` bus needs none of it (wire.h).
        .systemLibrary(name: "CSystemd", providers: [.apt(["libsystemd-dev"])]),
        // The real Linux device (logind, fprintd), the user's failure ledger, proof records,
        // standard paths, askpass, and the one-call setup for apps.
        .target(
            name: "KeygateLinux", dependencies: ["KeygatePolicy", "KeygatePAM", "KeygateStore", "Keygate", "CSystemd"]),
        // Test support shipped to users: decision corpus runner, fixtures.
        .target(
            name: "KeygateTesting",
            dependencies: [
                "KeygatePolicy", "KeygatePAM", "KeygateAudit", "KeygateStore", "Keygate", "KeygateItems", "KeygateKeys",
            ]),
        // The command-line tool's commands, as types a test can run in process.
        .target(
            name: "KeygateCLI",
            dependencies: [
                "KeygatePolicy", "KeygatePAM", "KeygateAudit", "KeygateStore", "Keygate", "KeygateLinux",
                "KeygateClient",
                "KeygateProtocol", "KeygateKeys", "KeygateItems", "KeygateSSHAgent", "KeygateServing",
            ]),
        // The command-line tool: a one-line main over KeygateCLI.
        .executableTarget(name: "keygate", dependencies: ["KeygateCLI", "CCommandLine"]),
        // Gives the Swift runtime the real argv at start-up (a static build under LD_PRELOAD; capture.c),
        // and, under the release link's --wrap=fopen, spares its argv search reading /proc/self/maps: every
        // executable built with the Makefile's RELEASE_FLAGS (keygate, keygated, keygate-bench) links it.
        .target(name: "CCommandLine"),
        // The broker's wire protocol: frames, messages carrying the facade's own request types, the
        // incremental decoder.
        .target(
            name: "KeygateProtocol", dependencies: ["KeygatePolicy", "KeygateItems"], exclude: ["README.md"]),
        // The daemon mode's keychain: the facade's operations through keygated's socket.
        .target(
            name: "KeygateClient",
            dependencies: ["KeygatePolicy", "KeygatePAM", "KeygateItems", "KeygateProtocol", "CPeer"]),
        // Kernel calls the broker needs that Swift cannot make directly (pidfd, peer credentials).
        .target(name: "CKeygated", linkerSettings: [.linkedLibrary("systemd")]),
        // Peer credentials and pidfds of Unix-socket callers (no library linked).
        .target(name: "CPeer"),
        // Serving a Unix socket, for every frontend: who the caller is (from the kernel only),
        // connection threads, and waiting on async facade calls from them.
        .target(name: "KeygateServing", dependencies: ["CPeer"]),
        // The SSH agent protocol (RFC 9987) over the keeper's keys: messages, sessions, the socket.
        // A bus connection that serves objects (sd-bus, opened at first use): the Secret Service frontend's.
        .target(name: "KeygateDBus", dependencies: ["CSystemd"]),
        .target(
            name: "KeygateSSHAgent",
            dependencies: ["KeygatePolicy", "KeygateItems", "KeygateKeys", "KeygateProtocol", "KeygateServing"]),
        // The broker daemon: one Unix socket, each caller's own store under its state directory.
        .executableTarget(
            name: "keygated",
            dependencies: [
                "KeygatePolicy", "KeygateStore", "Keygate", "KeygateLinux", "KeygateProtocol", "CKeygated", "CPeer",
                "CSystemd",
                "KeygateServing", "KeygateSSHAgent", "KeygateItems", "KeygateAudit",
                "KeygatePAM", "CCommandLine",
            ]),
        // A small protocol client for the broker's tests (run as other uids through setpriv).
        .executableTarget(
            name: "keygated-probe", dependencies: ["KeygateProtocol", "KeygatePolicy", "KeygateStore", "Keygate"],
            path: "Tests/KeygatedProbe"),
        // A group-commit audit writer driven over stdin, for KeygateAuditTests' kill -9 tests.
        .executableTarget(
            name: "keygate-trail-writer", dependencies: ["KeygateAudit", "KeygatePolicy"],
            path: "Tests/AuditTrailWriter"),

        // Benchmarks: `make bench` builds this in release and prints one table, each row beside
        // its baseline measured in the same run (Benchmarks/RESULTS.md). The C baseline (SQLite +
        // libsodium directly), an allocation counter and a stand-in logind (sd-bus) are compiled
        // into it.
        .target(
            name: "KeygateBenchC", path: "Benchmarks/CBaseline",
            linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary("sodium"), .linkedLibrary("systemd")]),
        .executableTarget(
            name: "keygate-bench",
            dependencies: [
                "KeygatePolicy", "KeygatePAM", "KeygateStore", "Keygate", "KeygateClient", "KeygateBenchC",
                "KeygateKeys", "CCommandLine",
            ],
            path: "Benchmarks/Suite"),

        .testTarget(name: "KeygateDBusTests", dependencies: ["KeygateDBus"]),
        .testTarget(name: "KeygatePolicyTests", dependencies: ["KeygatePolicy", "KeygateTesting"]),
        .testTarget(
            name: "KeygateAuditTests",
            dependencies: [
                "KeygateAudit", "KeygatePolicy", "KeygateItems", "KeygateStore", "Keygate", "KeygateTesting",
            ]),
        .testTarget(name: "KeygateStoreTests", dependencies: ["KeygateStore", "KeygateAudit", "KeygateTesting"]),
        .testTarget(name: "KeygateKeysTests", dependencies: ["KeygateKeys", "KeygateItems", "KeygatePolicy"]),
        .testTarget(
            name: "KeygateSSHAgentTests",
            dependencies: ["KeygateSSHAgent", "KeygateKeys", "KeygateItems", "KeygatePolicy"]),
        .testTarget(name: "KeygateTests", dependencies: ["Keygate", "KeygateStore", "KeygateTesting"]),
        .testTarget(
            name: "KeygateTestingTests", dependencies: ["Keygate", "KeygateStore", "KeygateTesting"],
            exclude: ["Golden"]),
        .testTarget(name: "KeygatePAMTests", dependencies: ["KeygatePAM", "KeygateTesting"]),
        .testTarget(
            name: "KeygateLinuxTests",
            dependencies: ["KeygateLinux", "KeygateTesting", "KeygateClient", "KeygateProtocol", "CCommandLine"]),
        .testTarget(
            name: "KeygateCLITests",
            dependencies: [
                "KeygatePolicy", "KeygateStore", "Keygate", "KeygateTesting", "KeygateCLI", "KeygateProtocol",
                "keygate",
            ]),
        .testTarget(
            name: "KeygateProtocolTests",
            dependencies: ["KeygateProtocol", "KeygatePolicy", "KeygateStore", "Keygate", "KeygateTesting"]),
        .testTarget(
            name: "KeygateClientTests",
            dependencies: [
                "KeygateClient", "KeygateProtocol", "KeygatePAM", "KeygatePolicy", "KeygateStore", "Keygate",
                "KeygateTesting",
            ]),
        .testTarget(
            name: "KeygatedTests",
            dependencies: [
                "KeygateProtocol", "KeygatePolicy", "KeygateStore", "Keygate", "keygated", "keygated-probe",
                "KeygateClient", "KeygateTesting", "KeygateServing", "CPeer", "KeygateKeys",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// One place sets the language bar for every Swift target, tests included.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .treatAllWarnings(as: .error),
        ]
}

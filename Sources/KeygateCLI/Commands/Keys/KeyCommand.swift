/// `keygate key create|list|public|sign|delete`: keys whose private half never leaves the keeper.
enum KeyCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        name: "key", summary: "make, list, export and use keys held by the keeper",
        discussion: """
            usage: keygate key create --type p256|ed25519 --label L [--access-control FLAGS]
                                      [--accessible CLASS] [--access-group G]
                   keygate key list [--label L] [--access-group G]
                   keygate key public --label L [--format openssh|pem|x963] [--access-group G]
                   keygate key sign --label L [--algorithm ecdsa-sha256|ecdsa-digest-sha256|ed25519]
                                    [--access-group G]
                   keygate key encrypt|decrypt --label L [--access-group G]
                   keygate key import --label L [--access-control FLAGS] [--accessible CLASS]
                                      [--access-group G] < OPENSSH-PRIVATE-KEY
                   keygate key delete --label L [--access-group G]

            create  makes a random key inside the keeper and prints it as list does. The flags
                    guard every use of the key; privateKeyUsage is added to them (without it a
                    constrained key could never be used, Apple's rule). Default class:
                    whenUnlockedThisDeviceOnly. One key a label: an existing label is exit 4.
            list    one JSON object a line per key: label, type, application label (hex), access
                    control, protection, keeper, imported. Never asks for a proof.
            public  the public key: an OpenSSH line with the label as comment (default), PEM
                    SubjectPublicKeyInfo, or the raw X9.63 / Ed25519 bytes (x963).
            sign    signs standard input after the key's access control allows it and writes the
                    signature to standard output (DER X9.62 for ECDSA, 64 bytes for Ed25519).
                    The audit record names the key, the algorithm and the SHA-256 of the input.
            encrypt encrypts standard input to a P-256 key with ECIES in Apple's layout
                    (eciesEncryptionCofactorVariableIVX963SHA256AESGCM); needs no proof.
            decrypt decrypts such a message after the key's access control allows it (ock).
            import  hands the keeper an unencrypted OpenSSH private key (Ed25519 or P-256) read
                    on standard input; listed as imported, used as a made key.
            delete  deletes the key (no proof needed).
            The private half is never exported. Exit codes as for items.
            """,
        options: KeyOptions.all, maximumPositionals: nil, choosesMode: true)

    static var subcommands: [any Command.Type] {
        [
            KeyCreateCommand.self, KeyListCommand.self, KeyPublicCommand.self, KeySignCommand.self,
            KeyEncryptCommand.self, KeyDecryptCommand.self, KeyImportCommand.self, KeyDeleteCommand.self,
        ]
    }

    static let missingSubcommand = UsageError("missing key command")

    static func unknownSubcommand(_ word: String) -> UsageError { UsageError("unknown key command '\(word)'") }
}

public import KeygateItems

/// The embedded facade offers the operations both modes share.
extension Keychain: KeychainAccess {}

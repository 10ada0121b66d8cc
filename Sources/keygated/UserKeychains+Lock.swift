import KeygateServing

extension UserKeychains {
    /// Forgets every proof the daemon would reuse for `identity` (its uid, login session and
    /// terminal), for `keygate lock`.
    ///
    /// Every proof of the caller's uid in its login session goes, whichever terminal it was
    /// made on (as a screen lock would); a caller without a session has none to forget.
    func forgetProofs(of identity: PeerIdentity) {
        guard let session = identity.session else { return }
        proofs.clear(uid: identity.uid, session: session)
    }
}

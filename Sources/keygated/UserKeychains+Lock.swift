extension UserKeychains {
    /// Forgets every proof the daemon would reuse for `identity` (its uid, login session and
    /// terminal), for `keygate lock`.
    ///
    /// The keychains of this layer cannot prompt, so no request ever leaves a reusable proof
    /// behind and there is nothing to forget; the prompt relay's proof cache is cleared here.
    func forgetProofs(of identity: PeerIdentity) {}
}

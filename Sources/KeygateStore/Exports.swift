// The store's API is made of the item values (``KeygateItems/ItemFields``, ``KeygateItems/SecretData``,
// the transaction participants), so `import KeygateStore` brings them too.
@_exported public import KeygateItems

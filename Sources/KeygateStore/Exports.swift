// The store's API names the audit trail's types (``KeygateAudit/FilePrivacy``, the trail's anchor kept in
// the database), so `import KeygateStore` brings them, and the trail's writer and reader, too.
@_exported public import KeygateAudit
@_exported public import KeygateItems

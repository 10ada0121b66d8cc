@_exported import KeygatePolicy

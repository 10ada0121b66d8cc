# fish completion for keygate(1). Installed as
# $(PREFIX)/share/fish/vendor_completions.d/keygate.fish.

set -l commands add get update delete list evaluate export import audit lock status agent key ssh-agent prove demo policy credential docker-credential
set -l classes whenPasscodeSetThisDeviceOnly whenUnlockedThisDeviceOnly whenUnlocked afterFirstUnlockThisDeviceOnly afterFirstUnlock alwaysThisDeviceOnly always
set -l flags userPresence biometryAny biometryCurrentSet devicePasscode companion or and privateKeyUsage applicationPassword

complete -c keygate -f

# Global options, before the command.
set -l global "not __fish_seen_subcommand_from $commands"
complete -c keygate -n $global -l daemon -d 'use keygated on $KEYGATE_SOCKET'
complete -c keygate -n $global -l embedded -d 'use the store in this process, never the daemon'
complete -c keygate -n $global -l store -r -F -d 'the item database'
complete -c keygate -n $global -l policies -r -a '(__fish_complete_directories)' -d 'directory of organisation policy files'
complete -c keygate -n $global -l audit -r -F -d 'the audit trail'
complete -c keygate -n $global -l pam-service -x -d 'PAM service for the passcode factor'
complete -c keygate -n $global -l pam-biometry-service -x -d 'PAM service for the biometry factor'
complete -c keygate -n $global -l passphrase-fd -x -d 'read the passphrase from this file descriptor'
complete -c keygate -n $global -l no-interaction -d 'never prompt'
complete -c keygate -n $global -l device-state -x -a 'logind unlocked locked' -d 'the device state'
complete -c keygate -n $global -l reuse-seconds -x -d 'reuse a proof for this long'
complete -c keygate -n $global -s V -l version -d 'print the version and exit'
complete -c keygate -s h -l help -d 'show the help and exit'

# Commands.
complete -c keygate -n $global -a add -d 'add an item'
complete -c keygate -n $global -a get -d "write an item's value to standard output"
complete -c keygate -n $global -a update -d "replace an item's value"
complete -c keygate -n $global -a delete -d 'delete an item'
complete -c keygate -n $global -a list -d "list items' attributes"
complete -c keygate -n $global -a evaluate -d 'decide an access control against a context file'
complete -c keygate -n $global -a export -d 'write an encrypted backup'
complete -c keygate -n $global -a import -d 'restore an encrypted backup'
complete -c keygate -n $global -a audit -d 'show or verify the audit trail'
complete -c keygate -n $global -a lock -d "forget this session's proofs"
complete -c keygate -n $global -a agent -d "answer keygated's questions for this session's requests"
complete -c keygate -n $global -a key -d 'make, list, export and use keys held by the keeper'
complete -c keygate -n $global -a ssh-agent -d "serve the keeper's keys to ssh, git and ssh-keygen"
complete -c keygate -n $global -a status -d 'show the mode, the store, the audit trail and the daemon'
complete -c keygate -n $global -a prove -d 'prove presence through PAM now'
complete -c keygate -n $global -a demo -d 'run Keygate on a temporary store'
complete -c keygate -n $global -a credential -d "git's credential-helper protocol"
complete -c keygate -n $global -a docker-credential -d "docker's credential-helper protocol"

# Item options.
set -l items "__fish_seen_subcommand_from add get update delete list"
complete -c keygate -n $items -s s -l service -x -d "the item's service"
complete -c keygate -n $items -s a -l account -x -d "the item's account"
set -l grouped "__fish_seen_subcommand_from add get update delete list export import credential"
complete -c keygate -n $grouped -s g -l access-group -x -d 'the access group'
complete -c keygate -n "__fish_seen_subcommand_from add" -l label -x -d 'a label'
set -l protected "__fish_seen_subcommand_from add evaluate credential"
complete -c keygate -n $protected -l accessible -x -a "$classes" -d 'protection class'
complete -c keygate -n $protected -l access-control -x -a "(__fish_complete_list , 'string split \" \" -- $flags')" -d 'access-control flags'
complete -c keygate -n "__fish_seen_subcommand_from get prove" -l prompt -x -d 'why the user is asked'

# evaluate, export, import, audit, prove.
complete -c keygate -n "__fish_seen_subcommand_from evaluate" -l context -r -F -d 'the context file (JSON)'
complete -c keygate -n "__fish_seen_subcommand_from evaluate" -l bound-enrollment -x -d 'template ids enrolled when the item was added'
complete -c keygate -n "__fish_seen_subcommand_from evaluate" -l operation -x -a 'read add update delete' -d 'the operation'
complete -c keygate -n "__fish_seen_subcommand_from export" -l to -r -F -d 'the backup file to create'
complete -c keygate -n "__fish_seen_subcommand_from export import" -l backup-passphrase-fd -x -d 'read the backup passphrase from this descriptor'
complete -c keygate -n "__fish_seen_subcommand_from import" -F
complete -c keygate -n "__fish_seen_subcommand_from audit; and not __fish_seen_subcommand_from show verify repair" -a 'show verify repair'
complete -c keygate -n "__fish_seen_subcommand_from audit" -l restart -d 'also accept a trail that no longer reaches the store anchor'
complete -c keygate -n $global -a policy -d 'check, explain or test organisation policies'
complete -c keygate -n "__fish_seen_subcommand_from policy; and not __fish_seen_subcommand_from check explain test" -a 'check explain test'
complete -c keygate -n "__fish_seen_subcommand_from policy" -s s -l service -x -d 'the item service'
complete -c keygate -n "__fish_seen_subcommand_from policy" -s a -l account -x -d 'the item account'
complete -c keygate -n "__fish_seen_subcommand_from policy" -s g -l access-group -x -d 'the item access group'
complete -c keygate -n "__fish_seen_subcommand_from policy" -l operation -x -a 'add read update delete export import list' -d 'the operation'
complete -c keygate -n "__fish_seen_subcommand_from policy" -l program -r -F -d 'the calling program'
complete -c keygate -n "__fish_seen_subcommand_from policy" -l label -x -d 'the item label'
complete -c keygate -n "__fish_seen_subcommand_from policy" -l access-control -x -d 'the item flags'
complete -c keygate -n "__fish_seen_subcommand_from policy" -l accessible -x -d 'the item protection class'
complete -c keygate -n "__fish_seen_subcommand_from policy" -l context -r -F -d 'a context file'
complete -c keygate -n "__fish_seen_subcommand_from prove" -l factor -x -a 'passcode biometry presence' -d 'the factor to prove'
complete -c keygate -n "__fish_seen_subcommand_from credential; and not __fish_seen_subcommand_from get store erase" -a 'get store erase'
complete -c keygate -n "__fish_seen_subcommand_from docker-credential; and not __fish_seen_subcommand_from store get erase list version" -a 'store get erase list version'

# key, ssh-agent.
complete -c keygate -n "__fish_seen_subcommand_from key; and not __fish_seen_subcommand_from create list public sign encrypt decrypt import delete" -a 'create list public sign encrypt decrypt import delete'
complete -c keygate -n "__fish_seen_subcommand_from key" -l type -x -a 'p256 ed25519' -d 'the key type'
complete -c keygate -n "__fish_seen_subcommand_from key" -s l -l label -x -d "the key's label"
complete -c keygate -n "__fish_seen_subcommand_from key" -l format -x -a 'openssh pem x963' -d "the public key's form"
complete -c keygate -n "__fish_seen_subcommand_from key" -l algorithm -x -a 'ecdsa-sha256 ecdsa-digest-sha256 ed25519' -d 'the signature algorithm'
complete -c keygate -n "__fish_seen_subcommand_from key" -l accessible -x -a "$classes" -d 'protection class'
complete -c keygate -n "__fish_seen_subcommand_from key" -l access-control -x -d 'access-control flags'
complete -c keygate -n "__fish_seen_subcommand_from key ssh-agent" -s g -l access-group -x -d 'the access group'
complete -c keygate -n "__fish_seen_subcommand_from ssh-agent" -s a -l socket -r -F -d 'where to listen'
complete -c keygate -n "__fish_seen_subcommand_from ssh-agent" -l passphrase-fd -x -d 'read answers from this descriptor'

# The helpers, installed as links to keygate.
complete -c git-credential-keygate -f
complete -c git-credential-keygate -l access-control -x -a "(__fish_complete_list , 'string split \" \" -- $flags')" -d 'access-control flags for stored credentials'
complete -c git-credential-keygate -l accessible -x -a "$classes" -d 'protection class for stored credentials'
complete -c git-credential-keygate -s g -l access-group -x -d 'the access group'
complete -c git-credential-keygate -s h -l help -d 'show the help and exit'
complete -c git-credential-keygate -a 'get store erase'
complete -c docker-credential-keygate -f -a 'store get erase list version'

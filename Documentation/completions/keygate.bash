# bash completion for keygate(1). Installed as
# $(PREFIX)/share/bash-completion/completions/keygate; also completes the credential helpers.

_keygate_classes="whenPasscodeSetThisDeviceOnly whenUnlockedThisDeviceOnly whenUnlocked afterFirstUnlockThisDeviceOnly afterFirstUnlock alwaysThisDeviceOnly always"
_keygate_flags="userPresence biometryAny biometryCurrentSet devicePasscode companion or and privateKeyUsage applicationPassword"

_keygate() {
    local cur prev words cword
    _init_completion -n = || return

    local global_options="--daemon --embedded --store --policies --audit --pam-service --pam-biometry-service --passphrase-fd --no-interaction --device-state --reuse-seconds -V --version -h --help"
    local commands="add get update delete list evaluate export import audit lock status agent key ssh-agent prove demo policy credential docker-credential"

    # The value of the option before the cursor (also --name=value).
    local option=$prev value=$cur
    if [[ $cur == --*=* ]]; then
        option=${cur%%=*}
        value=${cur#*=}
    fi
    case $option in
        --accessible)
            COMPREPLY=($(compgen -W "$_keygate_classes" -- "$value"))
            return ;;
        --access-control)
            # A comma-separated list: complete the word after the last comma.
            local head=""
            [[ $value == *,* ]] && head=${value%,*},
            COMPREPLY=($(compgen -P "$head" -W "$_keygate_flags" -- "${value##*,}"))
            compopt -o nospace
            return ;;
        --device-state)
            COMPREPLY=($(compgen -W "logind unlocked locked" -- "$value"))
            return ;;
        --factor)
            COMPREPLY=($(compgen -W "passcode biometry presence" -- "$value"))
            return ;;
        --operation)
            COMPREPLY=($(compgen -W "read add update delete" -- "$value"))
            return ;;
        --store | --audit | --context | --to)
            _filedir
            return ;;
        --policies)
            _filedir -d
            return ;;
        -s | --service | -a | --account | -g | --access-group | --label | --prompt | --pam-service | \
            --pam-biometry-service | --passphrase-fd | --backup-passphrase-fd | --reuse-seconds | \
            --bound-enrollment)
            return ;;
    esac

    # The command: the first word that is neither an option nor an option's value.
    local program=${words[0]##*/} command="" i
    case $program in
        git-credential-keygate) command=credential ;;
        docker-credential-keygate) command=docker-credential ;;
    esac
    for ((i = 1; i < cword; i++)); do
        [[ -n $command ]] && break
        case ${words[i]} in
            --store | --policies | --audit | --pam-service | --pam-biometry-service | --passphrase-fd | \
                --device-state | --reuse-seconds)
                ((i++)) ;;
            -*) ;;
            *) command=${words[i]} ;;
        esac
    done

    local options="" actions=""
    case $command in
        "")
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$global_options" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            fi
            return ;;
        add) options="-s --service -a --account -g --access-group --label --accessible --access-control" ;;
        get) options="-s --service -a --account -g --access-group --prompt" ;;
        update | delete | list) options="-s --service -a --account -g --access-group" ;;
        evaluate) options="--context --access-control --accessible --bound-enrollment --operation" ;;
        export) options="--to -g --access-group --backup-passphrase-fd" ;;
        import) options="-g --access-group --backup-passphrase-fd" ;;
        audit)
            options="--restart"
            actions="show verify repair" ;;
        policy)
            options="-s --service -a --account --operation --program -g --access-group --label --access-control --accessible --context"
            actions="check explain test" ;;
        lock | demo | status) ;;
        agent) options="--passphrase-fd" ;;
        key)
            options="--type -l --label --format --algorithm --access-control --accessible -g --access-group"
            actions="create list public sign encrypt decrypt import delete" ;;
        ssh-agent) options="-a --socket --passphrase-fd -g --access-group" ;;
        prove) options="--factor --prompt" ;;
        credential)
            options="--access-control --accessible -g --access-group"
            actions="get store erase" ;;
        docker-credential) actions="store get erase list version" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options -h --help" -- "$cur"))
    elif [[ -n $actions ]]; then
        COMPREPLY=($(compgen -W "$actions" -- "$cur"))
    elif [[ $command == import ]]; then
        _filedir
    fi
} &&
    complete -F _keygate keygate git-credential-keygate docker-credential-keygate

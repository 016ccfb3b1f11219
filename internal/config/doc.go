// Package config reads grub's defaults files: .grub/config.toml in the
// workspace (committed, shared by a team) and the user's
// $XDG_CONFIG_HOME/grub/config.toml (else ~/.config/grub/config.toml).
//
// A file holds top-level keys named like the long flags of grub start. The
// caller says which keys exist and what kind of value each takes
// ([Keys]); Parse checks a file against them and returns each setting in
// the text form its flag takes, with the line it is on. Every problem is an
// [*Error] naming the file, the line and the key. What a value means (a
// mode, a backend, a limit's range) is the flag's business, not this
// package's.
//
// config is the only importer of the TOML library
// (github.com/pelletier/go-toml/v2); it imports nothing else of grub's.
package config

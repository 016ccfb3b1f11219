package backend

import "encoding/json"

// openAIToolActivity describes one of the built-in agent's tool calls for
// the progress display (agent.Turn.Activity): a command's first words, the
// file it reads or writes, the pattern it searches for. Arguments that do
// not decode still leave the tool's name.
func openAIToolActivity(name, args string) string {
	var in struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		Pattern string `json:"pattern"`
	}
	_ = json.Unmarshal([]byte(args), &in)
	switch name {
	case "shell":
		return "shell: " + oneLine(in.Command)
	case "write_file", "edit_file":
		return "editing " + oneLine(in.Path)
	case "read_file":
		return "reading " + oneLine(in.Path)
	case "list_files":
		if in.Path == "" {
			in.Path = "."
		}
		return "listing " + oneLine(in.Path)
	case "glob", "grep":
		return "searching " + oneLine(in.Pattern)
	}
	return oneLine(name)
}

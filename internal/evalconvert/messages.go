package evalconvert

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// messageKeys are the keys of a message that one of the two readers reads: role, content, tool_calls, and name
// (the v2 judges read an expected message's name; the 4.42 reader keeps it).
var messageKeys = []string{"role", keyName, "content", "tool_calls"}

// input converts input_messages (at path) into a test's input: one user message with text as its content is written
// as that text (AgentV 4.42's shorthand, read into the same message); anything else as the list of messages (AgentV
// 4.42 validate refuses a mapping as input, which its loader reads as one user message).
func (c *converter) input(list *yaml.Node, path string, vc *evalfile.Case) *yaml.Node {
	c.guidelineFiles(list, path, vc)
	if refs := vc.InputFileRefs(); len(refs) > 0 && !c.inputFilesNoted {
		c.inputFilesNoted = true
		c.note(keyNode(list.Content[0], "content"), path, false, "input files: a v2 file's judges show them with their text "+
			"unless the EvalRun sets spec.judging.inputFiles, a 4.42 suite's as references (as AgentV shows a CLI "+
			"target): set spec.judging.inputFiles (Embed: as the v2 file was judged; Reference: as AgentV judges a CLI "+
			"runner) to judge both alike")
	}
	if len(list.Content) == 1 {
		if content, ok := shorthand(list.Content[0], evalfile.RoleUser); ok && isString(content) {
			return content
		}
	}
	for i, m := range list.Content {
		if r := lookup(m, "role"); r != nil && r.Value == string(evalfile.RoleTool) {
			c.note(r, path+"["+strconv.Itoa(i)+"].role", true, "AgentV 4.42 (agentv validate) refuses a tool message in "+
				"a test's input (system, user or assistant); the operator's 4.42 reader reads it as the v2 reader does")
		}
	}
	return c.messages(list, path)
}

// expected converts expected_messages (at path) into a test's expected_output, with the same shorthand for one
// assistant message.
func (c *converter) expected(list *yaml.Node, path string) *yaml.Node {
	if len(list.Content) == 1 {
		if content, ok := shorthand(list.Content[0], evalfile.RoleAssistant); ok {
			return content
		}
	}
	return c.messages(list, path)
}

// shorthand returns the content of message m when m is a message of role with only role and content, and the
// content is text or a mapping without a role key (which AgentV 4.42 would read as a message itself).
func shorthand(m *yaml.Node, role evalfile.Role) (*yaml.Node, bool) {
	if m.Kind != yaml.MappingNode || len(m.Content) != 4 || lookup(m, "role").Value != string(role) {
		return nil, false
	}
	content := lookup(m, "content")
	switch {
	case content == nil:
		return nil, false
	case isString(content):
		return content, true
	case content.Kind == yaml.MappingNode && lookup(content, "role") == nil:
		return content, true
	}
	return nil, false
}

// messages converts a list of messages: their role, name, content and tool_calls, as written.
func (c *converter) messages(list *yaml.Node, path string) *yaml.Node {
	out := seq()
	out.Style = list.Style
	for i, m := range list.Content {
		mpath := path + "[" + strconv.Itoa(i) + "]"
		msg := newMapping()
		msg.n.Style = m.Style
		msg.n.HeadComment, msg.n.LineComment = m.HeadComment, m.LineComment
		for _, k := range without(m, messageKeys...) {
			c.note(k, mpath+"."+k.Value, false, "dropped: the v2 reader ignores this key of a message")
		}
		pairs(m, func(k, v *yaml.Node) {
			switch k.Value {
			case "role", keyName, "tool_calls":
				if !isNull(v) {
					msg.set(k.Value, v, k)
				}
			case "content":
				if !isNull(v) {
					msg.set("content", v, k)
				}
			}
		})
		if !msg.has("content") && !msg.has("tool_calls") {
			// AgentV 4.42 drops a message without content; empty text shows the judges what no content shows them.
			msg.set("content", str(""), nil)
			c.note(keyNode(m, "role"), mpath, false, "a message without content is written with empty content "+
				"(AgentV 4.42 drops a message without)")
		}
		out.Content = append(out.Content, msg.n)
	}
	return out
}

// guidelineFiles notes the input files of case vc that the v2 judges set aside as guidelines (the patterns of
// AgentV's config, .agentv/config.yaml, nearest the eval file): AgentV 4.42 reads no such patterns and shows every
// input file to its judges.
func (c *converter) guidelineFiles(list *yaml.Node, path string, vc *evalfile.Case) {
	if len(c.patterns) == 0 || c.o.Bundle.Root == "" {
		return
	}
	for i, m := range vc.InputMessages {
		for j, s := range m.Content.Segments {
			if s.Type != evalfile.SegmentFile || s.Value == "" {
				continue
			}
			p, err := c.o.Bundle.Resolve(s.Value)
			if err != nil || !bundle.MatchAnyGlob(c.patterns, p) {
				continue
			}
			var at *yaml.Node
			if i < len(list.Content) {
				if content := lookup(list.Content[i], "content"); content != nil && j < len(content.Content) {
					at = content.Content[j]
				}
			}
			c.note(at, path+"["+strconv.Itoa(i)+"].content["+strconv.Itoa(j)+"]", true, "the input file %q matches a "+
				"guideline pattern of %s: the v2 judges set it aside (AgentV v2.0.1's guidelines); AgentV 4.42 has no "+
				"guideline patterns and shows the file to its judges", s.Value, bundle.ConfigPath)
		}
	}
}

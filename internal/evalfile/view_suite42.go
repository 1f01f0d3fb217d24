package evalfile

import (
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// The runner view of a 4.42 suite is written in the 4.42 format, as a runner written for AgentV 4.42's batch CLI
// reads a suite (AgentV passes a CLI batch target no file of its own: such a runner reads the suite's YAML, its
// tests' ids and input):
//
//   - at the top: tests, nothing else (no name, description, execution, suite-level input or assertions);
//   - per test: id, conversation_id (when set), criteria set to ViewExpectedOutcome (AgentV 4.42 skips a test
//     without criteria, expected_output or assertions: the placeholder keeps the view a suite AgentV and Parse
//     read, and says nothing about any test), and input: the test's effective input, the suite-level input and
//     input_files merged in and its vars filled, written as the test wrote it (a string or a mapping) when nothing
//     was merged, as a list of messages otherwise;
//   - per message: role, name (when set), content (a string, a mapping with its key order, or segments: text,
//     file and image, string items written as text segments) and tool_calls (tool, input, output).
//
// It never holds expected_output, the real criteria, assertions, rubrics, vars, metadata, execution or anything
// else of the suite. Like agentv-eval-v2's view, it is written anew from the parsed suite, reads back through
// Parse to the same ids and inputs, and can be cut into its items. It is written here, from the model, beside
// agentv-eval-v2's view; its tests read suites, so they are the 4.42 reader's (suite42/view_test.go).

// suiteViewHeader starts a 4.42 suite's view.
const suiteViewHeader = "tests:\n"

// writeTest writes a 4.42 test's view item.
func (vw *viewWriter) writeTest(c *Case) error {
	b := yamltree.AppendSpaces(vw.buf, viewCaseCol)
	b = append(b, "- id: "...)
	b = yamltree.AppendScalarString(b, c.ID)
	b = append(b, '\n')
	if c.ConversationID != "" {
		b = yamltree.AppendSpaces(b, viewCaseCol+2)
		b = append(b, "conversation_id: "...)
		b = yamltree.AppendScalarString(b, c.ConversationID)
		b = append(b, '\n')
	}
	b = yamltree.AppendSpaces(b, viewCaseCol+2)
	b = append(b, "criteria: "...)
	b = yamltree.AppendScalarString(b, ViewExpectedOutcome)
	b = append(b, '\n')
	switch {
	case c.InputForm == InputText && len(c.InputMessages) == 1 && c.InputMessages[0].Content.Kind == ContentText:
		b = yamltree.AppendMember(b, viewCaseCol+2, keyInput, &yamltree.Value{Kind: yamltree.KindString, Str: c.InputMessages[0].Content.Text})
	case c.InputForm == InputObject && len(c.InputMessages) == 1 && c.InputMessages[0].Content.Kind == ContentObject:
		v, err := yamltree.DecodeJSON(c.InputMessages[0].Content.Raw)
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		b = yamltree.AppendMember(b, viewCaseCol+2, keyInput, v)
	default:
		b = yamltree.AppendSpaces(b, viewCaseCol+2)
		b = append(b, "input:\n"...)
		vw.buf = b
		if err := vw.writeMessages(c.InputMessages); err != nil {
			return err
		}
		b = vw.buf
	}
	vw.buf = b
	return nil
}

// writeMessages writes messages at the view's message column.
func (vw *viewWriter) writeMessages(msgs []Message) error {
	b := vw.buf
	const col = viewMessageCol + 2
	for _, m := range msgs {
		b = appendMessageHead(b, string(m.Role))
		if m.Name != "" {
			b = yamltree.AppendMember(b, col, "name", &yamltree.Value{Kind: yamltree.KindString, Str: m.Name})
		}
		var err error
		if b, err = appendMessageBody(b, col, m); err != nil {
			return err
		}
	}
	vw.buf = b
	return nil
}

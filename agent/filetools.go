package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgebox/forgebox/files"
)

// The file tools act in the workspace without a shell, confined by the
// files package to the same rules as the sandbox: nothing outside the
// workspace, no symbolic link out of it, protected paths read-only, hidden
// ones never read.

type PathInput struct {
	Path string `json:"path" jsonschema:"a path inside the workspace, relative to it or absolute"`
}

type ListInput struct {
	Path string `json:"path,omitempty" jsonschema:"the directory, inside the workspace, relative to it or absolute (default: the workspace)"`
}

type ReadInput struct {
	Path   string `json:"path" jsonschema:"the file, inside the workspace"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the byte to start at (default 0); the result says where the next part starts"`
	Limit  int64  `json:"limit,omitempty" jsonschema:"at most this many bytes (default and maximum 256 KiB)"`
}

type WriteInput struct {
	Path    string `json:"path" jsonschema:"the file to create or replace, inside the workspace"`
	Content string `json:"content" jsonschema:"the whole new content, as text"`
}

type MoveInput struct {
	Source      string `json:"source" jsonschema:"what to move or copy, inside the workspace"`
	Destination string `json:"destination" jsonschema:"the new path, inside the workspace; it must not exist"`
}

type DeleteInput struct {
	Path      string `json:"path" jsonschema:"what to delete, inside the workspace"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a directory and everything in it"`
}

type EditInput struct {
	Path       string `json:"path" jsonschema:"the text file to change, inside the workspace"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace, whitespace and line breaks included; it must occur exactly once unless replace_all"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place (empty to delete it)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_string (default false: it must occur exactly once)"`
}

type MultiEditInput struct {
	Path  string       `json:"path" jsonschema:"the text file to change, inside the workspace"`
	Edits []EditChange `json:"edits" jsonschema:"the replacements, made in order, each on the text the previous one left; all or none"`
}

// EditChange is one replacement of multi_edit_file.
type EditChange struct {
	OldString  string `json:"old_string" jsonschema:"the exact text to replace; it must occur exactly once unless replace_all"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place (empty to delete it)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_string (default false)"`
}

// Done is the result of an action that returns nothing else.
type Done struct {
	Done bool   `json:"done" jsonschema:"the action was done"`
	Path string `json:"path,omitempty" jsonschema:"the path acted on, for a file action"`
	// UndoID names the undo record of a write (keepForUndo).
	UndoID string `json:"undo_id,omitempty" jsonschema:"the undo record that takes this write back (the undo tool's id)"`
}

// EditOutput is the result of edit_file and multi_edit_file.
type EditOutput struct {
	files.EditResult
	UndoID string `json:"undo_id,omitempty" jsonschema:"the undo record that takes this edit back (the undo tool's id)"`
}

func (s *server) addFileTools(srv *mcp.Server) {
	if s.c.Files == nil {
		return
	}
	addTool(srv, &mcp.Tool{Name: "list_directory", Title: "List a directory", Annotations: readOnly(),
		Description: "List a directory of the workspace: names, types, sizes, modes (octal, as chmod takes them), times and link targets. Hidden (secret) names show only their name."},
		s.listDirectory)
	addTool(srv, &mcp.Tool{Name: "read_file", Title: "Read a file", Annotations: readOnly(),
		Description: "Read a file of the workspace as text, in parts of at most 256 KiB (offset, limit); a binary file comes back in base64 with binary true."},
		s.readFile)
	addTool(srv, &mcp.Tool{Name: "write_file", Title: "Write a whole file", Annotations: changes(true, true),
		Description: "Create or replace a file of the workspace with this text (parent directories are created). Protected files (.git/hooks, .git/config, .envrc, editor and agent settings) cannot be written. To change part of a file, use edit_file."},
		s.writeFile)
	addTool(srv, &mcp.Tool{Name: "edit_file", Title: "Edit a file by replacing exact text", Annotations: changes(true, false),
		Description: editDescription}, s.editFile)
	addTool(srv, &mcp.Tool{Name: "multi_edit_file", Title: "Make several edits to one file", Annotations: changes(true, false),
		Description: "Make several exact-text replacements in one file, in order (each on the text the previous left), all or none: if one fails, the file is not changed. Each edit is as in edit_file."},
		s.multiEditFile)
	addTool(srv, &mcp.Tool{Name: "make_directory", Title: "Make a directory", Annotations: changes(false, true),
		Description: "Create a directory of the workspace, and its parents."}, s.makeDirectory)
	addTool(srv, &mcp.Tool{Name: "move_item", Title: "Move or rename a file or directory", Annotations: changes(false, true),
		Description: "Move or rename a file or directory inside the workspace; the destination must not exist."}, s.moveItem)
	addTool(srv, &mcp.Tool{Name: "copy_item", Title: "Copy a file or directory", Annotations: changes(false, true),
		Description: "Copy a file or directory tree inside the workspace; the destination must not exist."}, s.copyItem)
	addTool(srv, &mcp.Tool{Name: "delete_item", Title: "Delete a file or directory", Annotations: changes(true, true),
		Description: "Delete a file, or a directory with recursive true. The policy judges it like rm: it may be denied or need a person's approval."},
		s.deleteItem)
}

const editDescription = `Change a text file of the workspace by replacing exact text: old_string, copied exactly from the file (whitespace, indentation and line breaks included), becomes new_string.
old_string must occur exactly once, so include enough of the lines around it to make it unique; or set replace_all to replace every occurrence. No match, or several without replace_all, is an error that gives the count and the lines: nothing is changed then.
The file keeps its permission bits and is replaced atomically. Protected files (.git/hooks, .git/config, .envrc, editor and agent settings), binary files and symbolic links are not edited.`

// fileError renders an error of the files package for the model.
func fileError(err error) *mcp.CallToolResult {
	var fe *files.Error
	if errors.As(err, &fe) && fe.Hint != "" {
		return textResult(fmt.Sprintf("%v\nhint: %s", err, fe.Hint), true)
	}
	return textResult(err.Error(), true)
}

func (s *server) listDirectory(_ context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, files.Listing, error) {
	if in.Path == "" {
		in.Path = "."
	}
	l, err := s.c.Files.List(in.Path)
	if err != nil {
		return fileError(err), files.Listing{}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d entries", l.Path, len(l.Entries))
	if l.Truncated {
		b.WriteString(" (truncated)")
	}
	for _, e := range l.Entries {
		fmt.Fprintf(&b, "\n%-7s %10d  %s", e.Type, e.Size, e.Name)
		if e.Link != "" {
			fmt.Fprintf(&b, " -> %s", e.Link)
		}
	}
	return textResult(b.String(), false), l, nil
}

func (s *server) readFile(_ context.Context, _ *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, files.ReadResult, error) {
	r, err := s.c.Files.Read(in.Path, in.Offset, in.Limit)
	if err != nil {
		return fileError(err), files.ReadResult{}, nil
	}
	head := fmt.Sprintf("%s: bytes %d-%d of %d", r.Path, r.Offset, r.Offset+r.Length, r.Size)
	if !r.EOF {
		head += fmt.Sprintf(" (more follows: read again with offset %d)", r.Offset+r.Length)
	}
	if r.Binary {
		head += " (binary: base64)"
	}
	return textResult(head+"\n"+r.Content, false), r, nil
}

func (s *server) writeFile(_ context.Context, _ *mcp.CallToolRequest, in WriteInput) (*mcp.CallToolResult, Done, error) {
	keep := s.keepForUndo("write_file", in.Path)
	if err := s.c.Files.Write(in.Path, in.Content, true); err != nil {
		keep.discard()
		return fileError(err), Done{}, nil
	}
	id, note := keep.done()
	return textResult(fmt.Sprintf("wrote %d bytes to %s%s", len(in.Content), in.Path, note), false), Done{Done: true, Path: in.Path, UndoID: id}, nil
}

func (s *server) editFile(_ context.Context, _ *mcp.CallToolRequest, in EditInput) (*mcp.CallToolResult, EditOutput, error) {
	return s.edit("edit_file", in.Path, []files.Edit{{Old: in.OldString, New: in.NewString, All: in.ReplaceAll}})
}

func (s *server) multiEditFile(_ context.Context, _ *mcp.CallToolRequest, in MultiEditInput) (*mcp.CallToolResult, EditOutput, error) {
	edits := make([]files.Edit, len(in.Edits))
	for i, e := range in.Edits {
		edits[i] = files.Edit{Old: e.OldString, New: e.NewString, All: e.ReplaceAll}
	}
	return s.edit("multi_edit_file", in.Path, edits)
}

func (s *server) edit(tool, path string, edits []files.Edit) (*mcp.CallToolResult, EditOutput, error) {
	keep := s.keepForUndo(tool, path)
	r, err := s.c.Files.Edit(path, edits)
	if err != nil {
		keep.discard()
		return fileError(err), EditOutput{}, nil
	}
	id, note := keep.done()
	lines := make([]string, len(r.Lines))
	for i, l := range r.Lines {
		lines[i] = fmt.Sprint(l)
	}
	text := fmt.Sprintf("edited %s: %d replacement(s), at line %s; the file is now %d bytes%s", r.Path, r.Replacements, strings.Join(lines, ", "), r.Size, note)
	return textResult(text, false), EditOutput{EditResult: r, UndoID: id}, nil
}

func (s *server) makeDirectory(_ context.Context, _ *mcp.CallToolRequest, in PathInput) (*mcp.CallToolResult, Done, error) {
	if err := s.c.Files.Mkdir(in.Path); err != nil {
		return fileError(err), Done{}, nil
	}
	return textResult("created "+in.Path, false), Done{Done: true, Path: in.Path}, nil
}

func (s *server) moveItem(_ context.Context, _ *mcp.CallToolRequest, in MoveInput) (*mcp.CallToolResult, Done, error) {
	if err := s.c.Files.Move(in.Source, in.Destination); err != nil {
		return fileError(err), Done{}, nil
	}
	return textResult(fmt.Sprintf("moved %s to %s", in.Source, in.Destination), false), Done{Done: true, Path: in.Destination}, nil
}

func (s *server) copyItem(_ context.Context, _ *mcp.CallToolRequest, in MoveInput) (*mcp.CallToolResult, Done, error) {
	if err := s.c.Files.Copy(in.Source, in.Destination); err != nil {
		return fileError(err), Done{}, nil
	}
	return textResult(fmt.Sprintf("copied %s to %s", in.Source, in.Destination), false), Done{Done: true, Path: in.Destination}, nil
}

// deleteItem is judged as the rm command that would do the same: what the
// policy denies for rm it denies here, and what it asks about is put to
// the person the same way.
func (s *server) deleteItem(ctx context.Context, req *mcp.CallToolRequest, in DeleteInput) (*mcp.CallToolResult, Done, error) {
	if strings.TrimSpace(in.Path) == "" || strings.IndexByte(in.Path, 0) >= 0 {
		return textResult("path is empty or holds a NUL byte", true), Done{}, nil
	}
	argv := []string{"rm", "--", in.Path}
	if in.Recursive {
		argv = []string{"rm", "-r", "--", in.Path}
	}
	t := Target{Argv: argv, Dir: s.c.Workspace}
	// What the file layer refuses whatever anyone answers is refused
	// before the judge can ask about it.
	if err := s.c.Files.MayDelete(in.Path); err != nil {
		return fileError(err), Done{}, nil
	}
	g, err := s.gate(ctx, req, t, "delete "+in.Path)
	switch {
	case err != nil:
		return textResult("forgebox could not judge the deletion: "+err.Error(), true), Done{}, nil
	case g.asking != nil:
		return g.asking, Done{}, nil
	case g.denied:
		return textResult(fmt.Sprintf("DENIED: deleting %s (judged as %s): %s\nhint: do not delete it another way; ask the person", in.Path, t.display(), reasonsOf(g.decision)), true), Done{}, nil
	case g.stop != nil && g.stop.Approval != nil && len(g.stop.Approval.Scopes) > 0:
		return textResult("NEEDS APPROVAL: "+g.stop.Blocked.Message+"\nhint: "+g.stop.Blocked.Hint, true), Done{}, nil
	case g.stop != nil:
		return textResult(g.stop.Blocked.Message+"\nhint: "+g.stop.Blocked.Hint, true), Done{}, nil
	}
	if err := s.c.Files.Delete(in.Path, in.Recursive); err != nil {
		return fileError(err), Done{}, nil
	}
	return textResult("deleted "+in.Path, false), Done{Done: true, Path: in.Path}, nil
}

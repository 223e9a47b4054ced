// Command reference is the ground truth of gotmpl2jinja: it renders an Ollama chat template
// exactly as Ollama's Template.Parse/Execute would, on Go's real text/template.
//
// It serves JSON lines on stdin/stdout, one request and one response per line, so that a
// single long-lived process can answer thousands of renders a second:
//
//	{"id":1,"op":"render","template":"…","conversation":{…},"now":"2026-08-21T12:00:00Z",
//	 "function_json":true,"modelfile_system":"…","modelfile_messages":[…]}
//	→ {"id":1,"ok":true,"output":"…"}   (or "output_b64" when the bytes are not UTF-8)
//	→ {"id":1,"ok":false,"kind":"execute","error":"template: :3:5: executing …"}
//
// op "parse" answers {"ok":true,"vars":[…],"path":"messages|legacy"} or the parse error.
// op "same_request" takes "conversation_json" (a request body) and "conversations":[one reading
// of it] and answers {"ok":true,"output":""} when both decode alike where the template can see.
// op "render_many" takes "conversations":[…] instead of "conversation" and answers
// {"ok":true,"results":[{"ok":true,"output":"…"} | {"ok":false,"kind":…,"error":…}, …]}: one
// line for a batch of cases (the harness's bulk mode), each conversation decoded on its own so
// one bad case fails alone.
// A panic while serving one request is recovered and reported; the process keeps serving.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gotmpl2jinja/reference/api"
)

// maxOutput bounds one rendering, so a runaway template fails instead of eating memory.
const maxOutput = 64 << 20

// maxCached bounds the parsed-template cache (cleared when full).
const maxCached = 4096

type request struct {
	ID                int64        `json:"id"`
	Op                string       `json:"op"`
	Template          string       `json:"template"`
	TemplateID        int64        `json:"template_id"`
	Conversation      conversation `json:"conversation"`
	Now               string       `json:"now"`
	FunctionJSON      *bool        `json:"function_json"`
	ModelfileSystem   string       `json:"modelfile_system"`
	ModelfileMessages []apiMessage `json:"modelfile_messages"`
	// Conversations is the batch of op "render_many", each decoded separately.
	Conversations []json.RawMessage `json:"conversations"`
	// ConversationJSON is the conversation as the JSON text a client sent (decoded here, as
	// Ollama decodes the body, instead of Conversation): `-0` and escapes survive.
	ConversationJSON *string `json:"conversation_json"`
	// Server false renders Template.Execute alone: none of ChatHandler's steps (capability
	// refusals, the think default, image tags).
	Server *bool `json:"server"`
	// Lenient renders a request Ollama refuses for a capability as if the refused option were
	// absent (the Hugging Face convention the equivalence contract gives the Jinja).
	Lenient bool `json:"lenient"`
	// Family holds the steps Ollama takes by the model's family, parser and config (server
	// steps only; none when absent).
	Family *familySteps `json:"family"`
}

type response struct {
	ID        int64    `json:"id"`
	OK        bool     `json:"ok"`
	Output    *string  `json:"output,omitempty"`
	OutputB64 string   `json:"output_b64,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Error     string   `json:"error,omitempty"`
	Vars      []string `json:"vars,omitempty"`
	// Capabilities are those Ollama reads from the template (op "parse"), ThinkTags the two
	// tags thinking.InferTags gives.
	Capabilities []string `json:"capabilities,omitempty"`
	ThinkTags    []string `json:"think_tags,omitempty"`
	// TemplateID names the parsed template for later requests (sent instead of the source).
	TemplateID int64  `json:"template_id,omitempty"`
	Path       string `json:"path,omitempty"`
	// Results answers op "render_many", one per conversation, in order.
	Results []caseResult `json:"results,omitempty"`
}

// caseResult is one rendering of a batch: the output, or the failure's kind and message.
type caseResult struct {
	OK        bool    `json:"ok"`
	Output    *string `json:"output,omitempty"`
	OutputB64 string  `json:"output_b64,omitempty"`
	Kind      string  `json:"kind,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// conversation is a request body as Ollama's server decodes it.
type conversation = ChatRequest

// ChatRequest is Ollama's api.ChatRequest (named so, as Go's decoding errors name it), and
// the contract's fill-in-the-middle prompt and suffix (GenerateRequest's). Field names match
// case-insensitively and unknown keys are ignored, as encoding/json does for Ollama.
type ChatRequest struct {
	Messages []apiMessage `json:"messages"`
	Tools    api.Tools    `json:"tools"`
	Think    *thinkValue  `json:"think"`
	Prompt   string       `json:"prompt"`
	Suffix   string       `json:"suffix"`

	// The rest of api.ChatRequest cannot reach the template; decoded all the same, so that
	// what Ollama's decoder refuses (`"stream": "yes"`) is refused with its reason.
	Model           string          `json:"model"`
	Stream          *bool           `json:"stream,omitempty"`
	Format          json.RawMessage `json:"format,omitempty"`
	KeepAlive       *api.Duration   `json:"keep_alive,omitempty"`
	Options         map[string]any  `json:"options"`
	Truncate        *bool           `json:"truncate,omitempty"`
	Shift           *bool           `json:"shift,omitempty"`
	DebugRenderOnly bool            `json:"_debug_render_only,omitempty"`
	Logprobs        bool            `json:"logprobs,omitempty"`
	TopLogprobs     int             `json:"top_logprobs,omitempty"`
}

// checkChatRequest is what ChatHandler refuses of a decoded body before it looks at the model.
func checkChatRequest(c *ChatRequest) error {
	if c.TopLogprobs < 0 || c.TopLogprobs > 20 {
		return requestError{"top_logprobs must be between 0 and 20"}
	}
	return nil
}

// sameRequest answers op "same_request": whether the conversation (a reading of the body, as
// the Jinja side gets it) decodes to what the body itself decodes to, in every part that can
// reach the template.
func sameRequest(req *request) response {
	var body, reading ChatRequest
	if req.ConversationJSON == nil || len(req.Conversations) != 1 {
		return response{ID: req.ID, Kind: "request",
			Error: "same_request takes conversation_json and one conversation"}
	}
	if err := json.Unmarshal([]byte(*req.ConversationJSON), &body); err != nil {
		return response{ID: req.ID, Kind: "request",
			Error: "the request does not decode as Ollama would decode it: " + err.Error()}
	}
	if err := json.Unmarshal(req.Conversations[0], &reading); err != nil {
		return response{ID: req.ID, Kind: "request", Error: "the reading does not decode: " + err.Error()}
	}
	// A message's `"images": []` is read as no images: alike for every field the template
	// reads, but `json` or `%v` of a whole message prints `[]` for it and `null` without it
	// (the generator sends no empty images for that reason; `render` renders the body itself).
	for _, c := range []*ChatRequest{&body, &reading} {
		for i := range c.Messages {
			if len(c.Messages[i].Images) == 0 {
				c.Messages[i].Images = nil
			}
		}
	}
	differs := ""
	switch {
	case !reflect.DeepEqual(body.Messages, reading.Messages):
		differs = "messages"
	case !reflect.DeepEqual(body.Tools, reading.Tools):
		differs = "tools"
	case !reflect.DeepEqual(body.Think, reading.Think):
		differs = "think"
	case body.Prompt != reading.Prompt || body.Suffix != reading.Suffix:
		differs = "prompt/suffix"
	}
	return response{ID: req.ID, OK: true, Output: &differs}
}

// thinkValue is api.ThinkValue: a boolean or a level string.
type thinkValue = api.ThinkValue

// thinkOf gives (.Think, .ThinkLevel, .IsThinkSet) per ollama-semantics.md §7.
func thinkOf(t *thinkValue) (bool, string, bool) {
	if t == nil || t.Value == nil {
		return false, "", false
	}
	switch v := t.Value.(type) {
	case bool:
		if v {
			return true, "medium", true
		}
		return false, "", true
	case string:
		return true, v, true
	}
	return false, "", true
}

type requestError struct{ msg string }

func (e requestError) Error() string { return e.msg }

type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxOutput {
		return 0, fmt.Errorf("output exceeds %d bytes", maxOutput)
	}
	return b.Buffer.Write(p)
}

// server caches parsed templates by source and by the id it hands out for them.
type server struct {
	cache  map[string]*ollamaTemplate
	byID   map[int64]*ollamaTemplate
	lastID int64
}

var errUnknownTemplate = errors.New("unknown template_id (the renderer's cache was cleared)")

func (s *server) template(req *request) (*ollamaTemplate, error) {
	if req.TemplateID != 0 {
		if t, ok := s.byID[req.TemplateID]; ok {
			return t, nil
		}
		return nil, errUnknownTemplate
	}
	if t, ok := s.cache[req.Template]; ok {
		return t, nil
	}
	t, err := parseOllama(req.Template)
	if err != nil {
		return nil, err
	}
	if len(s.cache) >= maxCached {
		clear(s.cache)
		clear(s.byID)
	}
	s.lastID++
	t.id = s.lastID
	s.cache[req.Template] = t
	s.byID[t.id] = t
	return t, nil
}

func templateError(id int64, err error) response {
	kind := "parse"
	if err == errUnknownTemplate {
		kind = "unknown_template"
	}
	return response{ID: id, Kind: kind, Error: err.Error()}
}

func (s *server) serve(req *request) (resp response) {
	resp.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			resp = response{ID: req.ID, Kind: "panic", Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	switch req.Op {
	case "parse":
		t, err := s.template(req)
		if err != nil {
			return templateError(req.ID, err)
		}
		path := "legacy"
		if t.executePath(&values{}) == "messages" {
			path = "messages"
		}
		opening, closing := thinkingTags(t.tmpl.Tree.Root)
		return response{ID: req.ID, OK: true, Vars: t.vars, Path: path, TemplateID: t.id,
			Capabilities: t.caps, ThinkTags: []string{opening, closing}}
	case "render":
		return s.render(req)
	case "render_many":
		return s.renderMany(req)
	case "llama_server_body":
		return llamaServerBodies(req)
	case "same_request":
		return sameRequest(req)
	}
	return response{ID: req.ID, Kind: "request", Error: fmt.Sprintf("unknown op %q", req.Op)}
}

func (s *server) render(req *request) response {
	t, err := s.template(req)
	if err != nil {
		return templateError(req.ID, err)
	}
	r := s.renderOne(t, req)
	return response{ID: req.ID, OK: r.OK, Output: r.Output, OutputB64: r.OutputB64, Kind: r.Kind,
		Error: r.Error, TemplateID: t.id}
}

// renderMany renders every conversation of the batch with the same template and options.
func (s *server) renderMany(req *request) response {
	t, err := s.template(req)
	if err != nil {
		return templateError(req.ID, err)
	}
	results := make([]caseResult, len(req.Conversations))
	for i, raw := range req.Conversations {
		one := *req
		one.Conversation = conversation{}
		if jerr := json.Unmarshal(raw, &one.Conversation); jerr != nil {
			results[i] = caseResult{Kind: "request",
				Error: "the request does not decode as Ollama would decode it: " + jerr.Error()}
			continue
		}
		results[i] = s.renderSafely(t, &one)
	}
	return response{ID: req.ID, OK: true, Results: results, TemplateID: t.id}
}

// renderSafely is renderOne with a panic recovered into that case's result (the batch goes on).
func (s *server) renderSafely(t *ollamaTemplate, req *request) (r caseResult) {
	defer func() {
		if p := recover(); p != nil {
			r = caseResult{Kind: "panic", Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	return s.renderOne(t, req)
}

func (s *server) renderOne(t *ollamaTemplate, req *request) caseResult {
	if req.ConversationJSON != nil {
		one := *req
		one.Conversation, one.ConversationJSON = conversation{}, nil
		if err := json.Unmarshal([]byte(*req.ConversationJSON), &one.Conversation); err != nil {
			return caseResult{Kind: "request",
				Error: "the request does not decode as Ollama would decode it: " + err.Error()}
		}
		req = &one
	}
	v, err := requestValues(req)
	if err != nil {
		return caseResult{Kind: "request", Error: err.Error()}
	}
	if req.Server == nil || *req.Server {
		refused := serverSteps(t, v, req.Conversation.Think, len(req.Conversation.Messages),
			req.Family, req.Lenient)
		if refused != "" {
			return caseResult{Kind: "capability", Error: refused}
		}
	}
	var out limitedBuffer
	if err := t.execute(&out, v); err != nil {
		kind := "execute"
		if strings.HasPrefix(err.Error(), "panic: ") {
			kind = "panic"
		}
		return caseResult{Kind: kind, Error: err.Error()}
	}
	if utf8.Valid(out.Bytes()) {
		text := out.String()
		return caseResult{OK: true, Output: &text}
	}
	return caseResult{OK: true, OutputB64: base64.StdEncoding.EncodeToString(out.Bytes())}
}

// requestValues decodes the conversation like Ollama's server does and applies the Modelfile
// SYSTEM/MESSAGE rule (§8) and the think table (§7).
func requestValues(req *request) (*values, error) {
	conv := req.Conversation
	if err := checkChatRequest(&conv); err != nil {
		return nil, err
	}
	clock = defaultClock
	if req.Now != "" {
		now, err := time.Parse(time.RFC3339Nano, req.Now)
		if err != nil {
			return nil, requestError{fmt.Sprintf("now: %q is not an RFC 3339 time", req.Now)}
		}
		clock = now
	}
	for i := range conv.Messages {
		conv.Messages[i].Role = strings.ToLower(conv.Messages[i].Role) // as api.Message decodes
	}
	// Ollama: Modelfile MESSAGEs come first; Modelfile SYSTEM leads unless the request starts
	// with a system message.
	var msgs []apiMessage
	if req.ModelfileSystem != "" && (len(conv.Messages) == 0 || conv.Messages[0].Role != "system") {
		msgs = append(msgs, apiMessage{Role: "system", Content: req.ModelfileSystem})
	}
	msgs = append(msgs, req.ModelfileMessages...)
	msgs = append(msgs, conv.Messages...)
	think, level, isSet := thinkOf(conv.Think)
	functionJSON := req.FunctionJSON == nil || *req.FunctionJSON
	return &values{
		Messages: msgs, Tools: conv.Tools, Prompt: conv.Prompt, Suffix: conv.Suffix,
		Think: think, ThinkLevel: level, IsThinkSet: isSet, FunctionJSON: functionJSON,
	}, nil
}

var defaultClock = clock

// serverSteps applies what Ollama's ChatHandler (GenerateHandler for fill-in-the-middle) does
// to a request before Template.Execute, as far as the template alone decides it: a thinking
// template turns an absent think into true; think (true or a level) on a template without
// thinking, tools on one without tools, or a suffix on one without insert is answered 400
// (refused names the missing capability; with lenient the option is dropped instead); images
// become [img-N] tags in the message contents. A chat whose request has no messages (asked
// after those refusals, as ChatHandler does, and whatever the Modelfile adds) is not rendered
// at all: Ollama only loads the model (done reason "load"), refused is "load". The family's
// steps (fam, may be nil) add capabilities, map harmony's "max" to "high", strip earlier
// thinking and rename tools for harmony, in ChatHandler's order. Returns "" when the request
// goes on.
func serverSteps(t *ollamaTemplate, v *values, think *thinkValue, requestMessages int,
	fam *familySteps, lenient bool) (refused string) {
	wantsThink := think != nil && (v.Think || v.ThinkLevel != "")
	switch {
	case t.has("thinking") || fam.grants("thinking"):
		if think == nil {
			v.Think, v.ThinkLevel, v.IsThinkSet = thinkOf(&thinkValue{Value: true})
		}
	case wantsThink:
		if !lenient {
			return "thinking"
		}
		v.Think, v.ThinkLevel, v.IsThinkSet = false, "", false
	}
	fim := v.Prompt != "" && v.Suffix != ""
	if fim && !t.has("insert") && !fam.grants("insert") && !lenient {
		return "insert"
	}
	if !fim && len(v.Tools) > 0 && !t.has("tools") && !fam.grants("tools") {
		if !lenient {
			return "tools"
		}
		v.Tools = nil
	}
	if !fim && requestMessages == 0 && !lenient {
		return "load"
	}
	if fam != nil {
		if fam.HarmonyLevels && v.ThinkLevel == "max" {
			v.ThinkLevel = "high"
		}
		if fam.StripThink && !fim {
			v.Messages = stripThink(v.Messages)
		}
		if fam.HarmonyTools && !fim {
			v.Tools = renameHarmonyTools(v.Tools)
		}
	}
	v.Messages = tagImages(v.Messages)
	return ""
}

// tagImages is Ollama's imageTaggedMessages (server/prompt.go) for a template-rendered model:
// the images of all messages are numbered in order from 0, and each one either replaces the
// next "[img]" of its message's content by "[img-N]" or, when none is left, adds "[img-N]" to a
// prefix put before the content. Messages are copied; the images stay on them.
func tagImages(msgs []apiMessage) []apiMessage {
	out := slices.Clone(msgs)
	n := 0
	for i := range out {
		prefix, content := "", out[i].Content
		for range out[i].Images {
			tag := fmt.Sprintf("[img-%d]", n)
			n++
			if strings.Contains(content, "[img]") {
				content = strings.Replace(content, "[img]", tag, 1)
			} else {
				prefix += tag
			}
		}
		out[i].Content = prefix + content
	}
	return out
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	debug.SetGCPercent(400) // small heap, many short-lived allocations: collect less often
	s := &server{cache: map[string]*ollamaTemplate{}, byID: map[int64]*ollamaTemplate{}}
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			var resp response
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				resp = response{ID: lineID(line), Kind: "request", Error: "the request does not decode as Ollama would decode it: " + jerr.Error()}
			} else {
				resp = s.serve(&req)
			}
			if eerr := enc.Encode(&resp); eerr != nil {
				fmt.Fprintln(os.Stderr, eerr)
				os.Exit(1)
			}
			if ferr := out.Flush(); ferr != nil {
				os.Exit(1)
			}
		}
		if err != nil {
			return
		}
	}
}

// lineID recovers the id of a request whose body did not decode, so the answer is matched.
func lineID(line []byte) int64 {
	var head struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(line, &head)
	return head.ID
}

package jsonlresult
import ("testing";"bytes")
func BenchmarkMicroLine(b *testing.B){ var buf bytes.Buffer; writeWorkload(&buf, 1000); lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
 b.SetBytes(int64(buf.Len())); b.ReportAllocs(); var p recordParser
 for b.Loop() { for _, l := range lines { r, msg := p.parseLine(l); if r == nil { b.Fatal(msg) } } } }
func BenchmarkMicroSkip(b *testing.B){ var buf bytes.Buffer; writeWorkload(&buf, 1000); lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
 b.SetBytes(int64(buf.Len())); b.ReportAllocs(); var s scanner
 for b.Loop() { for _, l := range lines { s.reset(l); if !s.skip() { b.Fatal(s.err) } } } }

module gotmpl2jinja/reference

go 1.24

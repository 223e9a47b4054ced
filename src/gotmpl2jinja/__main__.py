from gotmpl2jinja.cli import main

main()

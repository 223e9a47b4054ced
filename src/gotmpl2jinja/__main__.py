from gotmpl2jinja.cli.main import main

main()

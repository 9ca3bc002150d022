# SPDX-License-Identifier: MIT
# Drops or moves the paragraph macros scdoc writes where roff needs none (right after a
# heading, before a heading or another paragraph, just before the end of an indented block),
# which mandoc -T lint warns about; the page renders the same.
/^\.P$/ {
    if (!pending && last !~ /^\.(SH|SS|TH|P|PP|RS)( |$)/) {
        pending = 1
    }
    next
}
# a paragraph break just before the end of an indent goes after it
/^\.RE$/ && pending {
    print
    last = $0
    next
}
{
    if (pending && $0 !~ /^\.(SH|SS|P|PP)( |$)/) {
        print ".P"
    }
    pending = 0
    print
    last = $0
}

-- tcp_use_service.vtc: a TCP service answering each line with its upper-case
-- copy, framed as an HTTP response so that varnishtest can read it.
core.register_service("upper", "tcp", function(applet)
    while true do
        local line = applet:getline()
        if line == nil or line == "" then
            break
        end
        local body = "U:" .. string.upper(line)
        applet:send("HTTP/1.1 200 OK\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body)
        if line == "bye\n" then
            break
        end
    end
end)

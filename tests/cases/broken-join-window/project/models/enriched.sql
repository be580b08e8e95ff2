SELECT window_start, window_end, COUNT(*) AS orders
FROM TABLE(TUMBLE(TABLE source('orders'), DESCRIPTOR(ordered_at), INTERVAL '1' MINUTE)) AS o
JOIN source('customers') AS c ON o.customer_id = c.customer_id
GROUP BY window_start, window_end

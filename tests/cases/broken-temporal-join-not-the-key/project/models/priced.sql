SELECT o.order_id, r.rate
FROM (SELECT order_id, CAST(amount AS DECIMAL(10, 4)) AS amount4, ordered_at FROM source('orders')) AS o
JOIN source('rates') FOR SYSTEM_TIME AS OF o.ordered_at AS r ON o.amount4 = r.rate

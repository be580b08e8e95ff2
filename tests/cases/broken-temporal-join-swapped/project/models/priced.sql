SELECT o.order_id, r.rate
FROM source('rates') AS r
JOIN source('orders') FOR SYSTEM_TIME AS OF r.valid_from AS o ON o.currency = r.currency

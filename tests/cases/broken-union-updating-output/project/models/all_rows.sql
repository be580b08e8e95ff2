SELECT order_id, CAST(amount AS STRING) AS detail FROM source('web_orders')
UNION ALL
SELECT order_id, status AS detail FROM source('order_status')

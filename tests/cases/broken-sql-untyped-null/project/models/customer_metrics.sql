SELECT
    customer_id,
    NULL AS nothing
FROM source('orders')
